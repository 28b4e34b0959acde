'use strict'
// The Mastra face of one process: `ProcessHandle`, exactly as Mastra's SandboxProcessManager
// hands it out (string pid, `exitCode` undefined while running, retained text, listeners,
// idempotent wait, kill, stdin, reader/writer), plus the Processes API's reading methods, since
// both are views of the same process core.

const errors = require('../native/errors')
const { binding } = require('../native/native')
const { ProcessCore, listenersOf } = require('../process/core')
const { ending, handleResult } = require('../process/mastra-rules')
const { ProcessView } = require('./view')
const { checkSignal, describe, stdinWriter } = require('../native/util')
const { traceMethods } = require('../native/trace')

class ProcessHandle extends ProcessView {
  /** @internal */
  constructor(core) {
    super()
    if (!(core instanceof ProcessCore)) {
      throw errors.invalidOption('ProcessHandle is created by ProcessManager.spawn(), not by new')
    }
    this._core = core
    /** The pid as Mastra types it, a string: made once, read at every lookup. */
    this._pid = String(core.pid)
    this._result = undefined
    this._reader = undefined
    this._writer = undefined
    /** The command as given to spawn (Mastra sets it after spawn; writable). */
    this.command = core.command
  }

  /** The OS process id, as a string (Mastra's type). */
  get pid() {
    return this._pid
  }

  /** The id of this process in the Processes API (`getProcess(id)`, cursors). */
  get id() {
    return this._core.id
  }

  /** The `name` it was spawned with, or undefined. */
  get name() {
    return this._core.name
  }

  /** The exit code once the process has exited and its output is drained; `undefined` before. */
  get exitCode() {
    return this._core.exitCode()
  }

  get stdout() {
    return this._core.native.retained('stdout').text
  }

  get stderr() {
    const text = this._core.native.retained('stderr').text
    const st = this._core.native.state()
    return st.finished && st.finishedExit.timedOut ? text + this._core.timeoutNote() : text
  }

  get stdoutTruncated() {
    return this.stdoutDroppedBytes > 0
  }

  get stderrTruncated() {
    return this.stderrDroppedBytes > 0
  }

  get stdoutDroppedBytes() {
    return this._core.native.retained('stdout').droppedBytes
  }

  get stderrDroppedBytes() {
    return this._core.native.retained('stderr').droppedBytes
  }

  /**
   * Waits for the process to exit and its output to drain; the same result every call.
   * Listeners given here receive output until this wait settles. An abort kills the process.
   */
  wait(options) {
    // Without options (the usual call) there is nothing to add, watch or remove: one reaction to
    // the native end, no `async` function around it.
    if (options === undefined || options === null) return this._core.finish().then((exit) => this._resultOf(exit))
    return this._waitWith(options)
  }

  async _waitWith(options) {
    const o = options
    if (typeof o !== 'object') throw errors.invalidOption(`wait options must be an object, got ${describe(o)}`)
    checkSignal(o.abortSignal, 'abortSignal')
    const added = this._core.addListeners(listenersOf(o))
    const signal = o.abortSignal
    let onAbort
    try {
      if (signal) {
        if (signal.aborted) await this.kill()
        else {
          onAbort = () => {
            this.kill()
          }
          signal.addEventListener('abort', onAbort, { once: true })
        }
      }
      return this._resultOf(await this._core.finish())
    } finally {
      if (onAbort) signal.removeEventListener('abort', onAbort)
      this._core.removeListeners(added)
    }
  }

  _resultOf(exit) {
    if (this._result) return { ...this._result }
    const end = ending(exit, { timeoutMs: this._core.timeout })
    const out = this._core.native.retainedOutput()
    const result = handleResult(end, { ...out, stderr: out.stderr + end.note })
    this._result = result
    return { ...result }
  }

  /**
   * SIGKILL to the whole process group, or its `shutdown` (its signal, SIGKILL after its
   * `timeoutMs`) when it was spawned with one. `false` if the process had already exited;
   * otherwise whether the signal reached a process, without waiting for the exit. With a `signal`
   * (1–64, or a name: 'SIGTERM', 'TERM'), sends that instead.
   */
  async kill(signal) {
    // A bad signal is refused whether or not the process is still running.
    if (signal !== undefined) binding.checkSignal(signal)
    if (this.exitCode !== undefined) return false
    // Mastra's own stop kills each process this way: a process that asked to be ended gently is.
    if (signal === undefined) return this._core.native.shutdown()
    return this._core.native.signal(signal, false)
  }

  /** Writes to stdin; resolves once written. Writes (and `closeStdin`) happen in call order. */
  async sendStdin(data) {
    this._core.assertNotExited(this.pid)
    await this._stdinCall(() => this._core.write(data))
  }

  /** Sends EOF on stdin after the writes made before it. Idempotent; rejects after exit or when stdin was ignored. */
  async closeStdin() {
    this._core.assertNotExited(this.pid)
    await this._stdinCall(() => this._core.closeStdin())
  }

  async _stdinCall(op) {
    try {
      await op()
    } catch (e) {
      // The process died while the write was queued: report Mastra's exit code (124/128), not
      // the raw one the native side saw.
      if (e instanceof errors.ProcessAlreadyExitedError) this._core.assertNotExited(this.pid)
      throw e
    }
  }

  /** stdout as a Node Readable (created on first use; replays retained output, ends at exit). */
  get reader() {
    if (!this._reader) this._reader = this._core.reader(this.pid)
    return this._reader
  }

  /** stdin as a Node Writable; `end()` closes stdin. */
  get writer() {
    if (!this._writer) {
      this._writer = stdinWriter(this)
    }
    return this._writer
  }
}

traceMethods(ProcessHandle, ['wait', 'kill', 'sendStdin', 'closeStdin'])

module.exports = { ProcessHandle }
