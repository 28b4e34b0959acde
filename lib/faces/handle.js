'use strict'
// The Mastra face of one process: `ProcessHandle`, exactly as Mastra's SandboxProcessManager
// hands it out (string pid, `exitCode` undefined while running, retained text, listeners,
// idempotent wait, kill, stdin, reader/writer), plus the Processes API's reading methods, since
// both are views of the same process.
//
// It is also the `nativeHandle` of a Mastra handle (procvisor/mastra), over a process in this
// Node process or under a persistent sandbox's supervisor alike: there it keeps no text of its
// own, and the exit code, the retained text and `wait()` are its owner's, the Mastra handle's.

const errors = require('../native/errors')
const { binding } = require('../native/native')
const { listenersOf } = require('../process/core')
const { isPort } = require('../process/port')
const { ending, handleResult } = require('../process/mastra-rules')
const { ProcessView } = require('./view')
const { checkSignal, describe, stdinWriter } = require('../native/util')
const { traceMethods } = require('../native/trace')

class ProcessHandle extends ProcessView {
  /**
   * @internal `port`: the process (lib/process/port.js); `owner`: the Mastra handle whose text and
   * end this one reports, when it is one's `nativeHandle`.
   */
  constructor(port, owner) {
    super()
    if (!isPort(port)) {
      throw errors.invalidOption('ProcessHandle is created by ProcessManager.spawn(), not by new')
    }
    this._port = port
    this._owner = owner
    /** The pid as Mastra types it, a string: made once, read at every lookup. */
    this._pid = String(port.pid)
    this._result = undefined
    this._reader = undefined
    this._writer = undefined
    /** The command as given to spawn (Mastra sets it after spawn; writable). */
    this.command = port.command
  }

  /** The OS process id, as a string (Mastra's type). */
  get pid() {
    return this._pid
  }

  /** The id of this process in the Processes API (`getProcess(id)`, cursors). */
  get id() {
    return this._port.id
  }

  /** The `name` it was spawned with, or undefined. */
  get name() {
    return this._port.name
  }

  /** The exit code once the process has exited and its output is drained; `undefined` before. */
  get exitCode() {
    return this._owner ? this._owner.exitCode : this._port.exitCode()
  }

  get stdout() {
    if (this._owner) return this._owner.stdout
    return this._port.native.retained('stdout').text
  }

  get stderr() {
    if (this._owner) return this._owner.stderr
    const core = this._port
    const text = core.native.retained('stderr').text
    const st = core.native.state()
    return st.finished && st.finishedExit.timedOut ? text + core.timeoutNote() : text
  }

  get stdoutTruncated() {
    return this.stdoutDroppedBytes > 0
  }

  get stderrTruncated() {
    return this.stderrDroppedBytes > 0
  }

  get stdoutDroppedBytes() {
    return this._owner ? this._owner.stdoutDroppedBytes : this._port.native.retained('stdout').droppedBytes
  }

  get stderrDroppedBytes() {
    return this._owner ? this._owner.stderrDroppedBytes : this._port.native.retained('stderr').droppedBytes
  }

  /**
   * Waits for the process to exit and its output to drain; the same result every call.
   * Listeners given here receive output until this wait settles. An abort kills the process.
   */
  wait(options) {
    if (this._owner) return this._ownerWait(options)
    // Without options (the usual call) there is nothing to add, watch or remove: one reaction to
    // the native end, no `async` function around it.
    if (options === undefined || options === null) return this._port.finish().then((exit) => this._resultOf(exit))
    return this._waitWith(options)
  }

  _checkWaitOptions(o) {
    if (typeof o !== 'object') throw errors.invalidOption(`wait options must be an object, got ${describe(o)}`)
    checkSignal(o.abortSignal, 'abortSignal')
  }

  /** The owner's wait (which keeps Node alive while it is pending), and its result. */
  async _ownerWait(options) {
    const o = options === undefined || options === null ? {} : options
    this._checkWaitOptions(o)
    const listeners = listenersOf(o)
    const owner = this._owner
    await owner.wait({
      onStdout: listeners.find(([i]) => i === 0)?.[1],
      onStderr: listeners.find(([i]) => i === 1)?.[1],
      abortSignal: o.abortSignal,
    })
    return handleResult(owner._end, owner)
  }

  async _waitWith(options) {
    const o = options
    this._checkWaitOptions(o)
    const core = this._port
    const added = core.addListeners(listenersOf(o))
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
      return this._resultOf(await core.finish())
    } finally {
      if (onAbort) signal.removeEventListener('abort', onAbort)
      core.removeListeners(added)
    }
  }

  _resultOf(exit) {
    if (this._result) return { ...this._result }
    const core = this._port
    const end = ending(exit, { timeoutMs: core.timeout })
    const out = core.native.retainedOutput()
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
    if (signal === undefined) return this._port.shutdown()
    return this._port.signal(signal)
  }

  /** Writes to stdin; resolves once written. Writes (and `closeStdin`) happen in call order. */
  async sendStdin(data) {
    this._port.assertNotExited(this.pid)
    await this._stdinCall(() => this._port.stdin.write(data))
  }

  /** Sends EOF on stdin after the writes made before it. Idempotent; rejects after exit or when stdin was ignored. */
  async closeStdin() {
    this._port.assertNotExited(this.pid)
    await this._stdinCall(() => this._port.stdin.close())
  }

  async _stdinCall(op) {
    try {
      await op()
    } catch (e) {
      // The process died while the write was queued: report Mastra's exit code (124/128), not
      // the raw one the native side saw.
      if (e instanceof errors.ProcessAlreadyExitedError) this._port.assertNotExited(this.pid)
      throw e
    }
  }

  /** stdout as a Node Readable (created on first use; replays from the first byte, ends at exit). */
  get reader() {
    if (!this._reader) this._reader = this._port.reader(this.pid)
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
