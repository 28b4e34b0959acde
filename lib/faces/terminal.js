'use strict'
// The Terminals API's face of one process: `Terminal`, returned by `createTerminal()` and
// `getTerminal()`. A terminal is a process on a pseudo-terminal like any other (kill, close(),
// containment and the watchdog apply); this face adds the keyboard, the window and the screen.

const errors = require('../native/errors')
const observe = require('../process/observe')
const { ProcessCore } = require('../process/core')
const { ProcessView } = require('./view')
const { traceMethods } = require('../native/trace')
const { connectTerminal } = require('./connect')

/** The Processes API's reading methods (status, waitForExit, waitForLog…) come from ProcessView. */
class Terminal extends ProcessView {
  /** @internal */
  constructor(core) {
    super()
    if (!(core instanceof ProcessCore)) {
      throw errors.invalidOption('Terminal is created by ProcessManager.createTerminal() or getTerminal(), not by new')
    }
    this._core = core
  }

  /** The id of this terminal (also its process id in `getProcess`, and in its cursors). */
  get id() {
    return this._core.id
  }

  /** The OS pid of the program on the terminal: the session leader. */
  get pid() {
    return this._core.pid
  }

  /** Types `data` (raw bytes, or a string as UTF-8); resolves once written. Writes keep their order. */
  async write(data) {
    this._core.check()
    this._core.assertNotExited(this.pid)
    await this._core.write(data)
  }

  /** Sets the window size; the foreground job gets SIGWINCH, and the screen follows. */
  async resize(cols, rows) {
    this._core.check()
    this._core.native.resize(cols, rows)
  }

  /**
   * The terminal's output as a stream of `stdout` events with resumable cursors: `logs()` under
   * the Terminals API's name (a terminal has no separate buffered `output()`).
   */
  async output(options) {
    this._core.check()
    return observe.logs(this._core.native, options)
  }

  /** SIGINT to the foreground process group (the job in front, not the shell behind it). */
  async interrupt() {
    this._core.check()
    return this._core.native.interrupt()
  }

  /**
   * Sends a signal (a number, or a name: 'SIGTERM', 'TERM'; default SIGTERM) to the program's
   * process group and to every process on the terminal; resolves once sent, never escalates.
   */
  async kill(signal) {
    this._core.check()
    return observe.kill(this._core.native, signal)
  }

  /** Kills the session (SIGKILL to every process on the terminal) and resolves with the exit. */
  async terminate() {
    this._core.check()
    this._core.native.signal(9, true)
    return observe.waitForExit(this._core.native)
  }

  /**
   * Serves this terminal over a WebSocket (`ws` or any object like it) in the protocol of
   * xterm.js's attach addon, plus a resize message (lib/faces/connect.js); `since` resumes the
   * output after a cursor. Resolves once the socket closed or the program ended.
   */
  async connect(ws, options) {
    this._core.check()
    return connectTerminal(this, ws, options)
  }

  /** What the terminal shows now, rendered from its output: `{ cols, rows, lines, cursor, title }`. */
  async getSnapshot() {
    this._core.check()
    const s = this._core.native.snapshot()
    return { cols: s.cols, rows: s.rows, lines: s.lines, cursor: { row: s.cursorRow, col: s.cursorCol }, title: s.title }
  }
}

traceMethods(Terminal, ['write', 'resize', 'output', 'connect', 'interrupt', 'kill', 'terminate', 'getSnapshot'])

module.exports = { Terminal }
