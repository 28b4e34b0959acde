'use strict'
// NativeProcessHandle: Mastra's ProcessHandle over one procvisor process core.

const { ProcessHandle: CoreProcessHandle } = require('../lib/handle.js')
const { mastraExitCode } = require('../lib/core.js')
const { ProcessStdinUnavailableError } = require('../lib/errors.js')
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
      this._stdinMode = o.stdinMode === 'ignore' ? 'ignore' : 'pipe'
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
      // Killed by the end of the sandbox's lifetime: a timeout too, reported as Mastra reports
      // its per-command one (124, timedOut, a note on stderr), with a note that says which.
      const lifetime = !exit.timedOut && this._lifetimeMs !== undefined && exit.signal !== undefined && exit.signal !== null
      if (exit.timedOut) this.emitStderr(this._core.timeoutNote())
      else if (lifetime) this.emitStderr(`\nProcess killed: the sandbox's lifetime (timeoutMs) of ${this._lifetimeMs} ms ended`)
      this.exitCode = lifetime ? 124 : mastraExitCode(exit)
      const timedOut = exit.timedOut || lifetime
      return {
        success: this.exitCode === 0,
        exitCode: this.exitCode,
        stdout: this.stdout,
        stderr: this.stderr,
        executionTimeMs: exit.afterMs,
        // Mastra reports a timeout as killed too (its timeout is a kill).
        killed: this.exitCode === 128 || timedOut,
        timedOut,
      }
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
      this._core.assertNotExited(this.pid)
      if (this._stdinMode === 'ignore') {
        throw new ProcessStdinUnavailableError(`Process ${this.pid} does not have stdin available`)
      }
    }
  }

  traceMethods(NativeProcessHandle, ['wait', 'kill', 'sendStdin', 'closeStdin', 'resize'])
  return NativeProcessHandle
}

module.exports = { defineNativeProcessHandle }
