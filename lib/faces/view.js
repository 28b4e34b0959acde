'use strict'
// The Processes API's reading methods, shared by `Process` (exec) and `ProcessHandle` (spawn):
// both are views of one process core. Subclasses set `_core`.

const observe = require('../process/observe')
const { traceMethods } = require('../native/trace')

class ProcessView {
  /** ProcessStatus: `running` until the root has exited and the group is empty. */
  async status() {
    this._core.check()
    return observe.status(this._core)
  }

  /** A replayable, cursor-addressed stream of log events. */
  async logs(options) {
    this._core.check()
    return observe.logs(this._core.native, options)
  }

  /** Buffered stdout/stderr and the exit. */
  async output(options) {
    this._core.check()
    return observe.output(this._core.native, options)
  }

  /** Waits until the whole process group has finished. */
  async waitForExit(options) {
    this._core.check()
    return observe.waitForExit(this._core.native, options)
  }

  /** Waits until stdout/stderr matches `pattern`. */
  async waitForLog(pattern, options) {
    this._core.check()
    return observe.waitForLog(this._core.native, pattern, options)
  }

  /**
   * Sets the window size of the process's terminal (started with `pty`); its foreground job
   * gets SIGWINCH.
   */
  async resize(cols, rows) {
    this._core.check()
    this._core.native.resize(cols, rows)
  }

  /** Waits until `port` accepts connections or answers HTTP. */
  async waitForPort(port, options) {
    this._core.check()
    return observe.waitForPort(this._core.native, port, options)
  }

  /**
   * Ends the process as `close()` would: through its `shutdown` option (its signal, SIGKILL
   * after its `timeoutMs`), or SIGKILL at once without one. Resolves with the exit.
   */
  async stop() {
    this._core.check()
    return observe.stop(this._core.native)
  }

  /**
   * A service's next run, now: the current run is ended as a failed liveness probe ends it,
   * without ending the service (a kill would), and the next starts at once, counted in
   * `restarts`. Resolves with the status once it runs. A process without `restart`:
   * InvalidProcessOptionError; one that has ended: ProcessAlreadyExitedError.
   */
  async restart() {
    this._core.check()
    await this._core.native.restartRun()
    return observe.status(this._core)
  }
}

traceMethods(ProcessView, ['status', 'logs', 'output', 'waitForExit', 'waitForLog', 'resize', 'waitForPort', 'stop', 'restart'])

module.exports = { ProcessView }
