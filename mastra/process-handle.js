'use strict'
// NativeProcessHandle: Mastra's ProcessHandle over one procvisor process, whichever side runs it:
// this Node process (backends/local.js) or a persistent sandbox's supervisor (backends/remote.js).
// The handle applies Mastra's rules (lib/process/mastra-rules.js); the process it is attached to feeds
// it output and the end, and its `nativeHandle` (procvisor's ProcessHandle of the same process,
// over its port) does the rest.

const { binding } = require('../lib/native/native.js')
const { commandResult, checkStdin, checkStdinData, retainedBytes, stdinModeOf } = require('../lib/process/mastra-rules.js')
const { traceMethods } = require('../lib/native/trace.js')
const { ProcessHandle: CoreProcessHandle } = require('../lib/faces/handle.js')

/** Builds NativeProcessHandle over Mastra's `ProcessHandle`. */
function defineNativeProcessHandle(ProcessHandle) {
  /**
   * Mastra `ProcessHandle` over one procvisor process. Output reaches Mastra's `emitStdout` /
   * `emitStderr` already decoded (a UTF-8 character split across reads arrives whole), and
   * Mastra's base class retains it, calls the listeners and feeds `reader`.
   *
   * The process it is attached to (`_process`) is what its backend launched or attached to:
   * `{ port, pid, name, feed(handle) }`, `port` the process as lib/process/port.js reaches it
   * (in this Node process or under a persistent sandbox's supervisor), `feed` its output and end
   * from now on, through `emitStdout`, `emitStderr`, `_ended` and `_lost`.
   */
  class NativeProcessHandle extends ProcessHandle {
    /** @internal Created by NativeProcessManager's spawn and get. */
    constructor(options) {
      const o = options || {}
      // The rule a persistent sandbox's supervisor applies too, so both sides refuse alike.
      if (o.maxRetainedBytes != null) retainedBytes(o.maxRetainedBytes)
      super(o) // registers spawn-time listeners, wraps wait()
      /** Exit code; `undefined` while running and until all output has been delivered. */
      this.exitCode = undefined
      this._process = undefined
      this._nativeHandle = undefined
      this._stdinMode = stdinModeOf(o.stdinMode)
      this._waitPromise = new Promise((resolve, reject) => {
        this._resolveWait = resolve
        this._rejectWait = reject
      })
      // A wait() that nobody makes must not be an unhandled rejection when the process is lost.
      this._waitPromise.catch(() => {})
    }

    /** The OS pid (also the process group id), in decimal, on the side that runs the process. */
    get pid() {
      return this._process ? this._process.pid : ''
    }

    /** The `name` it was spawned with, or undefined. */
    get name() {
      return this._process?.name
    }

    /** procvisor's own API of the same process (waitForPort, waitForLog, logs, signals). */
    get nativeHandle() {
      if (!this._nativeHandle && this._process) this._nativeHandle = new CoreProcessHandle(this._process.port, this)
      return this._nativeHandle
    }

    /** @internal Binds the handle to its process, which feeds it from then on. */
    _attach(process) {
      this._process = process
      process.feed(this)
    }

    /**
     * @internal The process ended and all its output was emitted (a note on stderr included):
     * `end` is Mastra's account of it (`ending` of lib/process/mastra-rules.js).
     */
    _ended(end) {
      if (this.exitCode !== undefined) return
      /** @internal How it ended, for its `nativeHandle`'s result. */
      this._end = end
      this.exitCode = end.exitCode
      this._resolveWait(commandResult(end, this.stdout, this.stderr))
    }

    /** @internal The process can no longer be reached (its supervisor is gone): wait() rejects. */
    _lost(error) {
      this._rejectWait(error)
    }

    /** Resolves once the process exited and its output is drained; the same result every call. */
    async wait() {
      if (this.exitCode !== undefined) return this._waitPromise
      return this._process.port.hold(this._waitPromise)
    }

    /**
     * SIGKILL to the whole process group; `false` if the process had already exited. Resolves
     * without waiting for the exit. procvisor extension: a `signal` (1–64, or a name: 'SIGTERM',
     * 'TERM') sends that instead.
     */
    async kill(signal) {
      // A bad signal is refused whether or not the process is still running.
      if (signal !== undefined) binding.checkSignal(signal)
      if (this.exitCode !== undefined) return false
      return this.nativeHandle.kill(signal)
    }

    /** Writes to stdin; resolves once written. Writes stay in order. */
    async sendStdin(data) {
      this._stdinCheck()
      checkStdinData(data)
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
      this._process.port.check()
      checkStdin(this.pid, this.exitCode, this._stdinMode)
    }
  }

  traceMethods(NativeProcessHandle, ['wait', 'kill', 'sendStdin', 'closeStdin', 'resize'])
  return NativeProcessHandle
}

module.exports = { defineNativeProcessHandle }
