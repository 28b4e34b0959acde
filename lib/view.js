'use strict'
// The Processes-API reading methods, shared by `Process` (exec) and `ProcessHandle` (spawn):
// both are views of one native process. Subclasses set `_native`, `_manager`, `_argv`, `_cwd`.

const errors = require('./errors')
const observe = require('./observe')

class ProcessView {
  _check() {
    if (this._manager && this._manager._closed) {
      throw new errors.StaleProcessHandleError(`process ${this._native.id} belongs to a closed process manager`)
    }
  }

  /** ProcessStatus: `running` until the root has exited and the group is empty. */
  async status() {
    this._check()
    return observe.status(this._native, { argv: this._argv, cwd: this._cwd })
  }

  /** A replayable, cursor-addressed stream of log events. */
  async logs(options) {
    this._check()
    return observe.logs(this._native, options)
  }

  /** Buffered stdout/stderr and the exit. */
  async output(options) {
    this._check()
    return observe.output(this._native, options)
  }

  /** Waits until the whole process group has finished. */
  async waitForExit(options) {
    this._check()
    return observe.waitForExit(this._native, options)
  }

  /** Waits until stdout/stderr matches `pattern`. */
  async waitForLog(pattern, options) {
    this._check()
    return observe.waitForLog(this._native, pattern, options)
  }

  /** Waits until `port` accepts connections or answers HTTP. */
  async waitForPort(port, options) {
    this._check()
    return observe.waitForPort(this._native, port, options)
  }
}

module.exports = { ProcessView }
