'use strict'
// The Processes API's face of one process: `Process`, returned by `exec()` and `getProcess()`.

const errors = require('../native/errors')
const observe = require('../process/observe')
const { ProcessCore } = require('../process/core')
const { ProcessView } = require('./view')
const { traceMethods } = require('../native/trace')

class Process extends ProcessView {
  /** @internal */
  constructor(core) {
    super()
    if (!(core instanceof ProcessCore)) {
      throw errors.invalidOption('Process is created by ProcessManager.exec() or getProcess(), not by new')
    }
    this._port = core
    this._exitCode = undefined
  }

  /** The process id in this manager (stable; names the process in log cursors). */
  get id() {
    return this._port.id
  }

  /** The `name` it was started with, or undefined. */
  get name() {
    return this._port.name
  }

  /** The OS pid of the root process (also its process group id); a service's current run's. */
  get pid() {
    return this._port.currentPid
  }

  /**
   * Resolves with the exit code once the whole process group has finished (the same boundary as
   * `waitForExit()`). Created on first access, so an unobserved process does not keep Node alive.
   */
  get exitCode() {
    if (!this._exitCode) this._exitCode = this._port.native.waitExitCode()
    return this._exitCode
  }

  /** Sends a signal (a number, or a name: 'SIGTERM', 'TERM'; default SIGTERM) to the whole group; never escalates. */
  async kill(signal) {
    this._port.check()
    return observe.kill(this._port.native, signal)
  }
}

traceMethods(Process, ['kill'])

module.exports = { Process }
