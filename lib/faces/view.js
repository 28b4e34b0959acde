'use strict'
// The Processes API's reading methods, shared by `Process` (exec), `ProcessHandle` (spawn, and a
// Mastra handle's `nativeHandle`) and `Terminal`: each is a view of one process's port
// (lib/process/port.js), the same whichever backend runs the process. Subclasses set `_port`.

const { traceMethods } = require('../native/trace')

class ProcessView {
  /** ProcessStatus: `running` until the root has exited and the group is empty. */
  async status() {
    this._port.check()
    return this._port.status()
  }

  /** A replayable, cursor-addressed stream of log events. */
  async logs(options) {
    this._port.check()
    return this._port.logs(options)
  }

  /** Buffered stdout/stderr and the exit. */
  async output(options) {
    this._port.check()
    return this._port.output(options)
  }

  /** Waits until the whole process group has finished. */
  async waitForExit(options) {
    this._port.check()
    return this._port.hold(this._port.waitForExit(options))
  }

  /** Waits until stdout/stderr matches `pattern`. */
  async waitForLog(pattern, options) {
    this._port.check()
    return this._port.hold(this._port.waitForLog(pattern, options))
  }

  /**
   * Sets the window size of the process's terminal (started with `pty`); its foreground job
   * gets SIGWINCH.
   */
  async resize(cols, rows) {
    this._port.check()
    await this._port.resize(cols, rows)
  }

  /** Waits until `port` accepts connections or answers HTTP. */
  async waitForPort(port, options) {
    this._port.check()
    return this._port.hold(this._port.waitForPort(port, options))
  }

  /**
   * Ends the process as `close()` would: through its `shutdown` option (its signal, SIGKILL
   * after its `timeoutMs`), or SIGKILL at once without one. Resolves with the exit.
   */
  async stop() {
    this._port.check()
    return this._port.hold(this._port.stop())
  }

  /**
   * A service's next run, now: the current run is ended as a failed liveness probe ends it,
   * without ending the service (a kill would), and the next starts at once, counted in
   * `restarts`. Resolves with the status once it runs. A process without `restart`:
   * InvalidProcessOptionError; one that has ended: ProcessAlreadyExitedError.
   */
  async restart() {
    this._port.check()
    return this._port.hold(this._port.restart())
  }
}

traceMethods(ProcessView, ['status', 'logs', 'output', 'waitForExit', 'waitForLog', 'resize', 'waitForPort', 'stop', 'restart'])

module.exports = { ProcessView }
