'use strict'
// The runtime of a sandbox whose running state lives in this Node process (every sandbox that
// is not persistent): the running sandboxes by id, joined and left by the objects that start
// into them, their lifetime (`timeoutMs`) and their terminals. Its processes run on the local
// backend (backends/local.js).

const { Lifetime } = require('../../lib/process/lifetime.js')
const { ProcessManager } = require('../../lib/faces/manager.js')
const { ProcessManagerClosedError } = require('../../lib/native/errors.js')
const { local } = require('../backends/index.js')

/**
 * The running sandboxes of this Node process, by id and resolved working directory. A sandbox
 * started while another with the same pair runs joins it (its processes and its lifetime)
 * rather than starting a second one. Module-level, so the CommonJS and ES module entries share it.
 */
const runningSandboxes = new Map()

/** One running sandbox, shared by the runtimes of every NativeLocalSandbox object that started into it. */
class RunningSandbox {
  constructor(key, timeoutMs, { tracked, dismissed }) {
    this.key = key
    this.timeoutMs = timeoutMs
    /** Whether the lifetime ran out: the stop that follows reports its kills as the lifetime's. */
    this.expired = false
    this.tracked = tracked
    this.dismissed = dismissed
    /** The InProcessRuntime of each object in it. */
    this.members = new Set()
    this.ended = false
    /** Whether it ends by a destroy, which captures nothing (the end's `destroying`). */
    this.destroying = false
    /** Checkpoint names captured as it ended, so that its other objects do not capture them again. */
    this.captured = new Set()
    /**
     * The in-process backend its processes and terminals run on, whichever of its objects starts
     * them (one table of names, one end): made at the first.
     */
    this.processes = undefined
    /** The end of `processes`, once it ends. */
    this.closing = undefined
    // An unfinished lifetime is no reason for Node to stay up.
    this.lifetime = new Lifetime(timeoutMs, () => this.expire(), { keepAlive: false })
  }

  /** When its lifetime ends (ms since the epoch), or null when it has none. */
  get expiresAt() {
    return this.lifetime.expiresAt
  }

  expire() {
    this.expired = true
    for (const member of [...this.members]) member.lifetimeExpired()
  }

  /**
   * Ends its processes and terminals (each through its shutdown) and waits for them; every
   * Terminal object of it is stale from then on. At the end of its lifetime (not by a destroy),
   * what still runs then is killed by it.
   */
  closed() {
    const backend = this.processes
    this.closing ??= backend ? (this.expired && !this.destroying ? backend._closeAtLifetime(this.timeoutMs) : backend.close()) : Promise.resolve()
    return this.closing
  }

  /**
   * It ends. `close`: its processes with it now (a start that failed, the last object leaving);
   * a stop or destroy ends them itself (`closed()`), once its spawns settled and its stacks are down.
   */
  end({ close }) {
    this.ended = true
    if (close) this.closed().catch(() => {})
    this.lifetime.cancel()
    if (runningSandboxes.get(this.key) === this) runningSandboxes.delete(this.key)
  }
}

/** A sandbox's runtime in this Node process; the interface is described in runtime/index.js. */
class InProcessRuntime {
  constructor(sandbox, { logFiles }) {
    this.sandbox = sandbox
    this.backend = local
    /** Where its processes' and terminals' logs are also written, or null. */
    this.logFiles = logFiles
    /** The running sandbox this object is in, while it is. */
    this.running = undefined
  }

  /**
   * Mastra's acquisition steps; `find` joins the sandbox with this id and directory running in
   * this Node process (which `connect` then takes as its handle), else runs Mastra's find.
   */
  async acquire(step, mastra, ...args) {
    if (step === 'start') return mastra.start(...args)
    if (step === 'find') {
      this.leave()
      const sandbox = this.sandbox
      const key = `${sandbox.id}\0${sandbox.workingDirectory}`
      const found = runningSandboxes.get(key)
      if (found && !found.ended) return found
      // Registered before the first await, so a sandbox started meanwhile joins this one.
      const running = new RunningSandbox(key, sandbox.timeoutMs, sandbox.processes._tables())
      runningSandboxes.set(key, running)
      this.join(running)
      return this.leavingOnError(() => mastra.find(...args))
    }
    if (step === 'connect' && args[0] instanceof RunningSandbox) {
      this.join(args[0])
      return this.leavingOnError(() => mastra.connect(this.sandbox.workingDirectory, args[1]))
    }
    return this.leavingOnError(() => mastra[step](...args))
  }

  /**
   * The end of this object's part: a destroy leaves at once, so that an object of the same
   * sandbox stopping meanwhile captures nothing; a stop leaves once its processes are settled.
   */
  end({ destroy }) {
    let left
    let alone
    const leave = () => (left ??= this.leave({ end: true }))
    if (destroy && leave().running) left.running.destroying = true
    return {
      get shared() {
        return leave().running ?? (alone ??= { destroying: destroy, captured: new Set() })
      },
      release: async () => {
        await leave().running?.closed()
      },
      others: async () => {
        const { running, ending } = leave()
        if (ending) await this.stopJoined(running)
      },
    }
  }

  /** When the running sandbox's lifetime ends (ms since the epoch), null without one, undefined when not running. */
  get expiresAt() {
    return this.running?.expiresAt
  }

  /**
   * The in-process backend of the running sandbox (a ProcessManager: its processes and
   * terminals), made by the first `create`, else null; ProcessManagerClosedError to create one
   * when the sandbox is not running.
   */
  processManager({ create = false } = {}) {
    const running = this.running
    if (!create) return running?.processes ?? null
    const sandbox = this.sandbox
    if (!running || running.ended) throw new ProcessManagerClosedError(`sandbox ${sandbox.id} is ${sandbox.status}, not running; start() starts it`)
    const logs = this.logFiles
    running.processes ??= new ProcessManager({
      workingDirectory: sandbox.workingDirectory,
      containment: 'auto',
      ...(logs && { logDirectory: logs.directory, logMaxBytes: logs.maxBytes, logKeep: logs.keep }),
    })
    return running.processes
  }

  /** Called by the running sandbox when its lifetime is over. */
  lifetimeExpired() {
    const sandbox = this.sandbox
    if (!['running', 'starting', 'error'].includes(sandbox.status)) return
    sandbox.logger.info('Sandbox lifetime expired; stopping it', { sandbox: sandbox.id, timeoutMs: sandbox.timeoutMs })
    sandbox._stop().catch((error) => sandbox.logger.error('Stopping the sandbox at the end of its lifetime failed', { sandbox: sandbox.id, error }))
  }

  join(running) {
    const processes = this.sandbox.processes
    if (running.ended) {
      const fresh = new RunningSandbox(running.key, this.sandbox.timeoutMs, processes._tables())
      runningSandboxes.set(running.key, fresh)
      running = fresh
    }
    this.running = running
    running.members.add(this)
    processes._useTables(running)
  }

  /**
   * Leaves the running sandbox; returns it, and whether leaving ended it. Stopping and
   * destroying end it for every object (`end`); a start that failed only leaves, and ends it
   * when nobody else is in it.
   */
  leave({ end = false } = {}) {
    const running = this.running
    if (!running) return { running: undefined, ending: false }
    this.running = undefined
    running.members.delete(this)
    const ending = !running.ended && (end || running.members.size === 0)
    if (ending) running.end({ close: !end })
    return { running, ending }
  }

  async leavingOnError(step) {
    try {
      return await step()
    } catch (error) {
      this.leave()
      throw error
    }
  }

  /** Stops the other objects of a running sandbox that just ended. */
  async stopJoined(running) {
    const others = [...running.members].map((m) => m.sandbox).filter((s) => s !== this.sandbox && s.status === 'running')
    await Promise.all(others.map((s) => s._stop().catch((error) => s.logger.error('Stopping a joined sandbox failed', { sandbox: s.id, error }))))
  }
}

module.exports = { InProcessRuntime }
