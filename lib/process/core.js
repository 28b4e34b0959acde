'use strict'
// lib/process/: the process model over the native core. One ProcessCore per process (here) with
// its listener pump and stdout reader; observe.js reads a core (status, logs, waits);
// mastra-rules.js holds Mastra's rules for a process wherever it runs, as the core applies them.
// Requires lib/native/ only.
//
// One process as every face sees it. `ProcessCore` holds the native process and everything that
// is JS by nature: the listener pump, the finish promise, the ordered stdin queue and the byte
// reader. It is the process's port in this Node process (port.js): the faces (lib/faces/) are
// views of it, `ProcessHandle`, `Process` and `Terminal`, as they are of a persistent sandbox's
// process through the socket's port. In `procvisor/mastra`, `NativeProcessHandle` (a subclass of
// Mastra's own ProcessHandle) is fed by it and has a `ProcessHandle` of it as `nativeHandle`.

const { binding, realm } = require('../native/native')
const errors = require('../native/errors')
const { mastraExitCode, timeoutNote, checkNotExited } = require('./mastra-rules')
const { scheduleDrain, listenersOf } = require('./listener-pump')
const { readerOf, holdUntilNextTurn } = require('./stdout-reader')
const { StdinQueue } = require('./stdin-queue')
const observe = require('./observe')
const { PORT } = require('./port')

class ProcessCore {
  constructor(native, meta) {
    this.native = native
    this.command = meta.command
    this.manager = meta.manager
    /** Launched with `restart`: a service, whose root (and pid) changes at each restart. */
    this.service = meta.service === true
    /** The `name` it was launched with (one live process of its manager holds it), or undefined. */
    this.name = meta.name
    this._argv = undefined
    this._id = undefined
    this._pid = undefined
    /** The producer is held at the start of stdout until the caller had its turn (see launch). */
    this.graceHold = false
    this.readerMade = false
    /** Listeners of stdout and stderr (two Sets), made by the first `addListeners`. */
    this.listeners = undefined
    this.pumping = false
    this.ended = false
    this.finishing = undefined
    /** The sandbox lifetime (ms) whose end killed it, if one did (a ProcessManager marks it). */
    this.lifetimeMs = undefined
    /** Its input, in call order and bounded (stdin-queue.js), made at the first write. */
    this._stdin = undefined
  }

  /** The id in its manager; read once (the native getter makes a new string per read). */
  get id() {
    if (this._id === undefined) this._id = this.native.id
    return this._id
  }

  // argv, cwd and timeout are read from the native side when first asked for: most processes
  // are never listed, and each read is a call across the boundary on the launch path.

  /** The argv as launched (frozen). */
  get argv() {
    if (this._argv === undefined) this._argv = Object.freeze(this.native.argv)
    return this._argv
  }

  get cwd() {
    return this.native.cwd
  }

  get timeout() {
    return this.native.timeoutMs
  }

  /**
   * The first root's pid; read once, as `id` (each read is a call across the boundary). A
   * Mastra handle keeps it as its key; a service's current root is `currentPid`.
   */
  get pid() {
    if (this._pid === undefined) this._pid = this.native.pid
    return this._pid
  }

  /** The pid of the current root: a service's changes at each restart. */
  get currentPid() {
    return this.service ? this.native.pid : this.pid
  }

  /** Throws StaleProcessHandleError once the manager that launched it is closed. */
  check() {
    if (this.manager && this.manager._closed) {
      throw new errors.StaleProcessHandleError(`process ${this.native.id} belongs to a closed process manager`)
    }
  }

  /**
   * Mastra's exit code once the process has finished (exited, output drained); else undefined.
   * Kept once known for a process that is not a service (a service's `restart()` may run it
   * again): the tables of exited processes ask each of theirs at every pass, up to 1,000 native
   * state reads a pass otherwise.
   */
  exitCode() {
    if (this._finishedCode !== undefined) return this._finishedCode
    const st = this.native.state()
    if (!st.finished) return undefined
    const code = mastraExitCode(st.finishedExit)
    if (!this.service) this._finishedCode = code
    return code
  }

  timeoutNote() {
    return timeoutNote(this.timeout)
  }

  // ---- listeners ---------------------------------------------------------------------------

  /** Adds listeners; returns what was added, for `removeListeners`. */
  addListeners(pairs) {
    if (pairs.length === 0) return pairs
    if (!this.listeners) this.listeners = [new Set(), new Set()]
    for (const [i, fn] of pairs) this.listeners[i].add(fn)
    if (pairs.length > 0) this.ensurePump()
    return pairs
  }

  removeListeners(pairs) {
    for (const [i, fn] of pairs) this.listeners[i].delete(fn)
  }

  /** The wake-up handed to the native pump. */
  wake() {
    return () => scheduleDrain(this)
  }

  ensurePump() {
    if (this.pumping || this.ended) return
    this.pumping = true
    this.native.setPump(this.wake())
  }

  /** Runs on the JS thread when the native side has new output for listeners. */
  drain() {
    if (this.pumping) this.emit(this.native.pumpDrain())
  }

  emit(chunks) {
    if (!this.listeners) return
    for (const c of chunks) {
      if (!c.text) continue
      for (const fn of [...this.listeners[c.stream]]) fn(c.text)
    }
  }

  /** Delivers the last output to listeners and stops the pump (output is complete). */
  endPump() {
    if (this.ended) return
    this.ended = true
    if (this.pumping) this.emit(this.native.pumpFinish())
    this.pumping = false
  }

  /**
   * Resolves with the Mastra end (`{ code, signal, timedOut, afterMs }`) once finished, after the
   * last output reached the listeners.
   */
  finish() {
    if (!this.finishing) {
      this.finishing = this.native.waitFinish().then((end) => {
        this.endPump()
        return end
      })
    }
    return this.finishing
  }

  // ---- stdin ----------------------------------------------------------------------------

  /** Its input's queue: writes and the EOF in call order, what waits bounded. */
  get stdin() {
    this._stdin ??= new StdinQueue(
      (buf) => this.native.writeStdin(buf),
      () => this.native.closeStdin(),
      () => this.pid,
    )
    return this._stdin
  }

  /** Mastra's rule: after exit, stdin calls reject with the exit code the face reports. */
  assertNotExited(pid) {
    checkNotExited(pid, this.exitCode())
  }

  write(data) {
    return this.stdin.write(data)
  }

  closeStdin() {
    return this.stdin.close()
  }

  // ---- the process as the faces reach it (./port.js) -----------------------------------------

  /** A wait here holds Node by its own native work: nothing to add. */
  hold(promise) {
    return promise
  }

  status() {
    return observe.status(this)
  }

  logs(options) {
    return observe.logs(this.native, options)
  }

  output(options) {
    return observe.output(this.native, options)
  }

  waitForExit(options) {
    return observe.waitForExit(this.native, options)
  }

  waitForLog(pattern, options) {
    return observe.waitForLog(this.native, pattern, options)
  }

  waitForPort(port, options) {
    return observe.waitForPort(this.native, port, options)
  }

  stop() {
    return observe.stop(this.native)
  }

  async restart() {
    await this.native.restartRun()
    return observe.status(this)
  }

  /** `signal` (a number or a name) to the group; whether it reached a process. */
  async signal(signal) {
    return this.native.signal(signal, false)
  }

  /** Its `shutdown` (its signal, SIGKILL after its `timeoutMs`), or SIGKILL without one. */
  async shutdown() {
    return this.native.shutdown()
  }

  async resize(cols, rows) {
    this.native.resize(cols, rows)
  }

  /** SIGINT to a terminal's foreground job. */
  async interrupt() {
    return this.native.interrupt()
  }

  /** SIGKILL to every process on a terminal, then its exit. */
  async terminate() {
    this.native.signal(9, true)
    return observe.waitForExit(this.native)
  }

  /** What a terminal shows now. */
  async snapshot() {
    const s = this.native.snapshot()
    return { cols: s.cols, rows: s.rows, lines: s.lines, cursor: { row: s.cursorRow, col: s.cursorCol }, title: s.title }
  }

  // ---- reader ------------------------------------------------------------------------------

  /** stdout as a byte stream, replaying from the start, that never loses bytes (see `readerOf`). */
  reader(pid) {
    return readerOf(this, pid)
  }
}

ProcessCore.prototype[PORT] = true

/**
 * Launches a native process and wraps it in a core. `face` is 'shell' (the Mastra surface) or
 * 'argv' (the Processes API); `request` is `{ command, options, env: [layers], cwd }` as the user
 * gave them, and the native side reads their meaning. `listeners` (`[stream, fn]` pairs) are
 * installed before the first byte, so they miss nothing; their first delivery waits for the
 * caller to have its handle (Mastra: the handle resolves before any output callback).
 *
 * `holdForReader`: the handle has a `reader` that replays stdout from its first byte. The
 * producer is held at that first byte from the start, until the caller has had its turn with the
 * handle (the continuation of its `await`, a check phase later): a reader made then gets every
 * byte. Without the hold a fast child (1 GB/s) overran the bounded log in the moment between the
 * launch and the caller's `handle.reader`, and that reader failed as truncated.
 */
function launch(face, request, meta, listeners = [], holdForReader = false) {
  let core
  const wake = listeners.length > 0 ? () => core && scheduleDrain(core) : undefined
  let launched
  try {
    launched = binding.spawnProcess(face, request, realm, wake, holdForReader)
  } catch (e) {
    // A request the conversion refuses rejects, as every other launch error does.
    return Promise.reject(e)
  }
  // One reaction, not an `async` function: each `await` on the launch's path is a promise and
  // a microtask of the JS thread's, between the child's exec and the caller's continuation.
  return launched.then((native) => {
    const o = request.options
    core = new ProcessCore(native, o !== null && typeof o === 'object' && o.restart != null ? { ...meta, service: true } : meta)
    if (holdForReader) holdUntilNextTurn(core)
    if (wake) {
      core.pumping = true
      core.addListeners(listeners)
      scheduleDrain(core)
    }
    return core
  })
}

module.exports = { ProcessCore, launch, listenersOf }
