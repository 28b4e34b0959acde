'use strict'
// NativeProcessHandle: Mastra's ProcessHandle over one procvisor process core.

const { ProcessHandle: CoreProcessHandle } = require('../lib/handle.js')
const { ending, commandResult, checkStdin, stdinModeOf } = require('../lib/mastra-rules.js')
const { traceMethods } = require('../lib/trace.js')

/** Builds NativeProcessHandle over Mastra's `ProcessHandle`. */
function defineNativeProcessHandle(ProcessHandle) {
  /**
   * Mastra `ProcessHandle` over one procvisor process core. Output reaches Mastra's `emitStdout` /
   * `emitStderr` already decoded (a UTF-8 character split across reads arrives whole), and
   * Mastra's base class retains it, calls the listeners and feeds `reader`.
   */
  class NativeProcessHandle extends ProcessHandle {
    /** @internal Created by NativeProcessManager.spawn. */
    constructor(options) {
      const o = options || {}
      super(o) // validates maxRetainedBytes, registers spawn-time listeners, wraps wait()
      /** Exit code; `undefined` while running and until all output has been delivered. */
      this.exitCode = undefined
      this._core = undefined
      this._view = undefined
      this._stdinMode = stdinModeOf(o.stdinMode)
      this._waitPromise = undefined
      /** @internal The sandbox lifetime (ms) whose end is killing this process, once it does. */
      this._lifetimeMs = undefined
    }

    /** The OS pid (also the process group id), in decimal. */
    get pid() {
      return this._core ? String(this._core.pid) : ''
    }

    /** procvisor's own view of the same process (waitForPort, waitForLog, logs, signals). */
    get nativeHandle() {
      if (!this._view && this._core) this._view = new CoreProcessHandle(this._core)
      return this._view
    }

    /** @internal */
    _attach(core) {
      this._core = core
      this._waitPromise = core.finish().then((exit) => this._settle(exit))
    }

    /** @internal Resolves after the last chunk reached the listeners. */
    _settle(exit) {
      const end = ending(exit, { timeoutMs: this._core.timeout, lifetimeMs: this._lifetimeMs })
      if (end.note) this.emitStderr(end.note)
      this.exitCode = end.exitCode
      return commandResult(end, this.stdout, this.stderr)
    }

    /** Resolves once the process exited and its output is drained; the same result every call. */
    async wait() {
      return this._waitPromise
    }

    /**
     * SIGKILL to the whole process group; `false` if the process had already exited. Resolves
     * without waiting for the exit. procvisor extension: a numeric signal (1–64) sends that instead.
     */
    async kill(signal) {
      if (this.exitCode !== undefined) return false
      return this.nativeHandle.kill(signal)
    }

    /** Writes to stdin; resolves once written. Writes stay in order. */
    async sendStdin(data) {
      this._stdinCheck()
      await this.nativeHandle.sendStdin(data)
    }

    /** Sends EOF on stdin. Idempotent; rejects after exit or when stdin was ignored. */
    async closeStdin() {
      this._stdinCheck()
      await this.nativeHandle.closeStdin()
    }

    /** Sets the window size of the process's terminal (spawned with `pty`). */
    async resize(cols, rows) {
      return this.nativeHandle.resize(cols, rows)
    }

    _stdinCheck() {
      checkStdin(this.pid, this.exitCode ?? this._core.exitCode(), this._stdinMode)
    }
  }

  traceMethods(NativeProcessHandle, ['wait', 'kill', 'sendStdin', 'closeStdin', 'resize'])
  return NativeProcessHandle
}

module.exports = { defineNativeProcessHandle }
