'use strict'
// lib/process/: the process model over the native core. One ProcessCore per process (here) with
// its listener pump and stdout reader; observe.js reads a core (status, logs, waits);
// mastra-rules.js holds Mastra's rules for a process wherever it runs, as the core applies them.
// Requires lib/native/ only.
//
// One process as every face sees it. `ProcessCore` holds the native process and everything that
// is JS by nature: the listener pump, the finish promise, the ordered stdin queue and the byte
// reader. The faces are thin views over one core: `ProcessHandle` (the Mastra surface of
// `ProcessManager.spawn`), `Process` (the Processes API) and, in `procvisor/mastra`,
// `NativeProcessHandle` (a subclass of Mastra's own ProcessHandle).

const { binding, realm } = require('../native/native')
const errors = require('../native/errors')
const { mastraExitCode, timeoutNote, checkNotExited, checkStdinData } = require('./mastra-rules')
const { scheduleDrain, listenersOf } = require('./listener-pump')
const { readerOf, holdUntilNextTurn } = require('./stdout-reader')

/**
 * Bytes of stdin that may wait for a process, written but not yet taken by its pipe. Past it a
 * write is refused with a typed error, nothing of it sent: a program that never reads its stdin
 * must not make Node (or a persistent sandbox's supervisor) grow without bound. A single write
 * larger than this is taken when nothing waits before it.
 */
const STDIN_BACKLOG = 16 * 1024 * 1024

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
    /** The last stdin operation queued (see `stdinQueue`); undefined before the first. */
    this.stdinTail = undefined
    /** Bytes of the writes queued and not yet settled. */
    this.stdinQueued = 0
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

  /** Mastra's exit code once the process has finished (exited, output drained); else undefined. */
  exitCode() {
    const st = this.native.state()
    return st.finished ? mastraExitCode(st.finishedExit) : undefined
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

  // ---- stdin -------------------------------------------------------------------------------

  /**
   * Runs stdin operations one after another, in call order. Each native call is a task of its
   * own on the runtime, so calls made without awaiting (`sendStdin(a); sendStdin(b);
   * closeStdin()`) could otherwise reach the pipe in any order, and the EOF overtake the writes.
   */
  stdinQueue(op) {
    const run = this.stdinTail ? this.stdinTail.then(op) : Promise.resolve().then(op)
    this.stdinTail = run.then(
      () => {},
      () => {},
    )
    return run
  }

  /** Mastra's rule: after exit, stdin calls reject with the exit code the face reports. */
  assertNotExited(pid) {
    checkNotExited(pid, this.exitCode())
  }

  write(data) {
    checkStdinData(data)
    // A copy: the caller may reuse its buffer as soon as this returns.
    const buf = typeof data === 'string' ? Buffer.from(data, 'utf8') : Buffer.from(data)
    const queued = this.stdinQueued
    if (queued > 0 && queued + buf.length > STDIN_BACKLOG) {
      const E = errors.ProcessStdinBacklogError
      return Promise.reject(
        new E(
          `stdin of process ${this.pid} is full: ${queued} bytes written before are still unread (at most ` +
            `${STDIN_BACKLOG} may wait); nothing of this write was sent, await earlier writes before sending more`,
        ),
      )
    }
    this.stdinQueued += buf.length
    const settle = () => {
      this.stdinQueued -= buf.length
    }
    const run = this.stdinQueue(() => this.native.writeStdin(buf))
    run.then(settle, settle)
    return run
  }

  closeStdin() {
    return this.stdinQueue(() => this.native.closeStdin())
  }

  // ---- reader ------------------------------------------------------------------------------

  /** stdout as a byte stream, replaying from the start, that never loses bytes (see `readerOf`). */
  reader(pid) {
    return readerOf(this, pid)
  }
}

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

module.exports = { STDIN_BACKLOG, ProcessCore, launch, listenersOf }
