'use strict'
// A persistent NativeLocalSandbox's side of its supervisor: finding, starting, attaching to and
// ending it, and letting go of it (`detach()`).

const path = require('node:path')
const { SandboxSupervisorLostError, invalidOption } = require('../../lib/errors.js')
const { findSupervisor } = require('../../lib/persistent/client.js')
const { socketPath } = require('../../lib/persistent/location.js')

/** The sandbox methods that speak to its supervisor (added to NativeLocalSandbox). */
class SupervisorMethods {
  /**
   * Lets go of a persistent sandbox without stopping it: its processes run on until its
   * lifetime ends, and a later `start()` (here or in another Node process) attaches again.
   */
  async detach() {
    if (!this._persistent) throw invalidOption('detach() is for persistent sandboxes (persistent: true); stop() ends this one')
    const conn = this._conn
    this._conn = undefined
    if (conn) conn.close()
    if (this.status === 'running') this.status = 'stopped'
  }

  /** @internal The live connection, or the typed error of its loss. */
  _connection() {
    const conn = this._conn
    if (!conn) throw new SandboxSupervisorLostError(`sandbox ${this.id} is not attached; start() attaches it`)
    if (conn.lostError) throw conn.lostError
    return conn
  }

  /** @internal */
  _supervisorConfig() {
    return {
      id: String(this.id),
      workingDirectory: path.resolve(this.workingDirectory),
      socketPath: socketPath(this.id),
      timeoutMs: this._timeoutMs,
      snapshot: this._snapshotOnStop ? { checkpointsDirectory: path.resolve(this._checkpointsDirectory), checkpointName: this._checkpointName } : null,
    }
  }

  /** @internal The supervisor already serving this id, if one answers. */
  async _findSupervisor() {
    const conn = await findSupervisor(socketPath(this.id))
    if (!conn) return undefined
    const wd = path.resolve(this.workingDirectory)
    if (conn.sandbox.workingDirectory !== wd) {
      conn.close()
      throw invalidOption(`sandbox ${this.id} is running in ${conn.sandbox.workingDirectory}, not in ${wd}: one id is one sandbox`)
    }
    return conn
  }

  /** @internal */
  _attach(conn) {
    if (this._conn && this._conn !== conn) this._conn.close()
    this._conn = conn
    // Handles of an earlier connection speak to a supervisor this object no longer uses.
    this.processes._tracked = new Map()
    this.processes._dismissed = new Set()
    conn.once('lost', (error) => this.logger.warn('The supervisor of a persistent sandbox is gone', { sandbox: this.id, error: error.message }))
  }

  /** @internal stop() and destroy() of a persistent sandbox: the supervisor ends with its processes. */
  async _endSupervisor() {
    const conn = this._conn
    this._conn = undefined
    if (!conn || conn.lostError) return
    try {
      await conn.call('shutdown')
    } catch (error) {
      if (!(error instanceof SandboxSupervisorLostError)) throw error
    }
    conn.close()
  }
}

module.exports = { SupervisorMethods }
