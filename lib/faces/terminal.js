'use strict'
// The Terminals API's face of one process: `Terminal`, returned by `createTerminal()` and
// `getTerminal()`, and by a sandbox's `terminals` whichever backend runs it (a persistent
// sandbox's terminal is kept by its supervisor, its output and screen included). A terminal is
// a process on a pseudo-terminal like any other (kill, close(), containment and the watchdog
// apply); this face adds the keyboard, the window and the screen.

const errors = require('../native/errors')
const { isPort } = require('../process/port')
const { ProcessView } = require('./view')
const { traceMethods } = require('../native/trace')
const { connectTerminal } = require('./connect')

/** The Processes API's reading methods (status, waitForExit, waitForLog…) come from ProcessView. */
class Terminal extends ProcessView {
  /** @internal `port`: the process on the terminal (lib/process/port.js). */
  constructor(port) {
    super()
    if (!isPort(port)) {
      throw errors.invalidOption('Terminal is created by ProcessManager.createTerminal() or getTerminal(), not by new')
    }
    this._port = port
  }

  /** The id of this terminal (also its process id in `getProcess`, and in its cursors). */
  get id() {
    return this._port.id
  }

  /** The OS pid of the program on the terminal: the session leader. */
  get pid() {
    return this._port.pid
  }

  /** Types `data` (raw bytes, or a string as UTF-8); resolves once written. Writes keep their order. */
  async write(data) {
    this._port.check()
    this._port.assertNotExited(this.pid)
    await this._port.stdin.write(data)
  }

  /**
   * The terminal's output as a stream of `stdout` events with resumable cursors: `logs()` under
   * the Terminals API's name (a terminal has no separate buffered `output()`).
   */
  async output(options) {
    this._port.check()
    return this._port.logs(options)
  }

  /** SIGINT to the foreground process group (the job in front, not the shell behind it). */
  async interrupt() {
    this._port.check()
    return this._port.interrupt()
  }

  /**
   * Sends a signal (a number, or a name: 'SIGTERM', 'TERM'; default SIGTERM) to the program's
   * process group and to every process on the terminal; resolves once sent, never escalates.
   */
  async kill(signal) {
    this._port.check()
    await this._port.signal(signal === undefined ? 15 : signal)
  }

  /** Kills the session (SIGKILL to every process on the terminal) and resolves with the exit. */
  async terminate() {
    this._port.check()
    return this._port.hold(this._port.terminate())
  }

  /**
   * Serves this terminal over a WebSocket (`ws` or any object like it) in the protocol of
   * xterm.js's attach addon, plus a resize message (lib/faces/connect.js); `since` resumes the
   * output after a cursor. Resolves once the socket closed or the program ended.
   */
  async connect(ws, options) {
    this._port.check()
    return this._port.hold(connectTerminal(this, ws, options))
  }

  /** What the terminal shows now, rendered from its output: `{ cols, rows, lines, cursor, title }`. */
  async getSnapshot() {
    this._port.check()
    return this._port.snapshot()
  }
}

traceMethods(Terminal, ['write', 'resize', 'output', 'connect', 'interrupt', 'kill', 'terminate', 'getSnapshot'])

module.exports = { Terminal }
