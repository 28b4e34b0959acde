'use strict'
// The seed-002 face of one native process: `Process`, returned by `exec()` and `getProcess()`.

const errors = require('./errors')
const observe = require('./observe')
const { ProcessView } = require('./view')

class Process extends ProcessView {
  /** @internal */
  constructor(native, manager, argv, cwd) {
    super()
    if (!native || typeof native.state !== 'function' || !manager) {
      throw errors.invalidOption('Process is created by ProcessManager.exec() or getProcess(), not by new')
    }
    this._native = native
    this._manager = manager
    this._argv = argv
    this._cwd = cwd
    this._exitCode = undefined
  }

  /** The process id in this manager (stable; names the process in log cursors). */
  get id() {
    return this._native.id
  }

  /** The OS pid of the root process (also its process group id). */
  get pid() {
    return this._native.pid
  }

  /**
   * Resolves with the exit code once the whole process group has finished (the same boundary as
   * `waitForExit()`). Created on first access, so an unobserved process does not keep Node alive.
   */
  get exitCode() {
    if (!this._exitCode) this._exitCode = this._native.waitDone().then((st) => st.exit.code)
    return this._exitCode
  }

  /** Sends a numeric signal (default 15, SIGTERM) to the whole group; never escalates. */
  async kill(signal) {
    this._check()
    return observe.kill(this._native, signal)
  }
}

module.exports = { Process }
