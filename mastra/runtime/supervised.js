'use strict'
// The runtime of a persistent sandbox: its supervisor, found, started, attached to, ended and
// let go of (`detach()`), and the connection to it while attached. Its processes run under the
// supervisor, on the remote backend (backends/remote.js).

const path = require('node:path')
const { SandboxSupervisorLostError, invalidOption } = require('../../lib/native/errors.js')
const { Connection, findSupervisor, startSupervisor } = require('../../lib/persistent/client/client.js')
const { socketPath } = require('../../lib/persistent/wire/location.js')
const { remote } = require('../backends/index.js')

/** A persistent sandbox's runtime; the interface is described in runtime/index.js. */
class SupervisedRuntime {
  constructor(sandbox, { logFiles, checkpointsDirectory }) {
    this.sandbox = sandbox
    this.backend = remote
    this.logFiles = logFiles
    this.checkpointsDirectory = checkpointsDirectory
    /** The connection to the supervisor while attached. */
    this.conn = undefined
    /** Whether the last acquisition started the supervisor (`'started'`) or joined it (`'joined'`). */
    this.how = undefined
  }

  /**
   * Mastra's acquisition steps around the supervisor: `find` answers with the supervisor serving
   * the id (which `connect` then joins), `connect` without one and `create` start one, and a
   * `start` of a sandbox whose supervisor was lost or let go of finds or starts it again rather
   * than report it still running.
   */
  async acquire(step, mastra, ...args) {
    const sandbox = this.sandbox
    switch (step) {
      case 'find':
        return (await this.find()) ?? mastra.find(...args)
      case 'connect': {
        const [handle, options] = args
        if (handle instanceof Connection) {
          this.attach(handle, 'joined')
          return mastra.connect(sandbox.workingDirectory, options)
        }
        // The working directory is there, no supervisor serves the id: one starts.
        await mastra.connect(handle, options)
        return this.start()
      }
      case 'create':
        await mastra.create(...args)
        return this.start()
      default:
        if (sandbox.status === 'running' && !this.attached()) sandbox.status = 'stopped'
        return mastra.start(...args)
    }
  }

  /**
   * The end of this object's part: the supervisor ends with its processes once their stacks are
   * down. Another object attached to it is told by the supervisor, not from here.
   */
  end({ destroy }) {
    return {
      shared: { destroying: destroy, captured: new Set() },
      release: () => this.endSupervisor(),
      others: async () => {},
    }
  }

  /** When the supervisor's lifetime ends (ms since the epoch), null without one, undefined when not attached. */
  get expiresAt() {
    return this.conn?.sandbox?.expiresAt
  }

  /** The live connection, or undefined (never started, stopped, detached, lost). */
  attached() {
    const conn = this.conn
    return conn && !conn.lostError ? conn : undefined
  }

  /** The connection while attached, lost or not (a lost one still answers with its loss); else undefined. */
  currentConnection() {
    return this.conn
  }

  /** The live connection, or the typed error of its loss. */
  connection() {
    const conn = this.conn
    if (!conn) throw new SandboxSupervisorLostError(`sandbox ${this.sandbox.id} is not attached; start() attaches it`)
    if (conn.lostError) throw conn.lostError
    return conn
  }

  /** The supervisor's pid while attached. */
  get pid() {
    return this.attached()?.sandbox.pid
  }

  /** `'started'` or `'joined'` while attached. */
  get supervisor() {
    return this.attached() ? this.how : undefined
  }

  /** Lets go of the supervisor without ending it. */
  detach() {
    const conn = this.conn
    this.conn = undefined
    if (conn) conn.close()
    if (this.sandbox.status === 'running') this.sandbox.status = 'stopped'
  }

  config() {
    const sandbox = this.sandbox
    const checkpoints = this.checkpointsDirectory === undefined ? null : path.resolve(this.checkpointsDirectory)
    return {
      id: String(sandbox.id),
      workingDirectory: path.resolve(sandbox.workingDirectory),
      socketPath: socketPath(sandbox.id),
      timeoutMs: sandbox.timeoutMs,
      checkpointsDirectory: checkpoints,
      snapshot: sandbox.snapshotOnStop ? { checkpointsDirectory: checkpoints, checkpointName: sandbox.checkpointName } : null,
      logFiles: this.logFiles,
    }
  }

  /** The supervisor already serving this id, if one answers. */
  async find() {
    const sandbox = this.sandbox
    const conn = await findSupervisor(socketPath(sandbox.id))
    if (!conn) return undefined
    const wd = path.resolve(sandbox.workingDirectory)
    if (conn.sandbox.workingDirectory !== wd) {
      conn.close()
      throw invalidOption(`sandbox ${sandbox.id} is running in ${conn.sandbox.workingDirectory}, not in ${wd}: one id is one sandbox`)
    }
    return conn
  }

  /** Starts the supervisor (or joins one that won the race to start) and attaches. */
  async start() {
    const conn = await startSupervisor(this.config())
    this.attach(conn, conn.startedHere ? 'started' : 'joined')
  }

  attach(conn, how) {
    const sandbox = this.sandbox
    if (this.conn && this.conn !== conn) this.conn.close()
    this.conn = conn
    this.how = how
    // Handles of an earlier connection speak to a supervisor this object no longer uses.
    sandbox.processes._useTables({ tracked: new Map(), dismissed: new Set() })
    conn.once('lost', (error) => {
      // A sandbox that ended (its lifetime, a stop from another Node process) is stopped here
      // too, as a local one whose lifetime ended is; a supervisor that died is reported lost.
      if (conn.ended && this.conn === conn && sandbox.status === 'running') sandbox.status = 'stopped'
      sandbox.logger.warn('The supervisor of a persistent sandbox is gone', { sandbox: sandbox.id, error: error.message })
    })
  }

  /** The supervisor ends with its processes. */
  async endSupervisor() {
    const conn = this.conn
    this.conn = undefined
    if (!conn || conn.lostError) return
    try {
      await conn.call('shutdown')
    } catch (error) {
      if (!(error instanceof SandboxSupervisorLostError)) throw error
    }
    conn.close()
  }
}

module.exports = { SupervisedRuntime }
