'use strict'
// A NativeLocalSandbox's lifetime (`timeoutMs`) and its reconnection by id within this Node
// process: the running sandboxes, and the sandbox methods that join and leave them.

const { Lifetime } = require('../lib/process/lifetime.js')

/**
 * The running sandboxes of this Node process, by id and resolved working directory. A sandbox
 * started while another with the same pair runs joins it (its processes and its lifetime)
 * rather than starting a second one. Module-level, so the CommonJS and ES module entries share it.
 */
const runningSandboxes = new Map()

/** One running sandbox, shared by every NativeLocalSandbox object that started into it. */
class RunningSandbox {
  constructor(key, timeoutMs, tracked, dismissed) {
    this.key = key
    this.timeoutMs = timeoutMs
    /** Whether the lifetime ran out: the stop that follows reports its kills as the lifetime's. */
    this.expired = false
    this.tracked = tracked
    this.dismissed = dismissed
    /** The table of its processes' names, shared by every object of it (set as the first joins). */
    this.names = undefined
    this.members = new Set()
    this.ended = false
    this.destroying = false
    /** Checkpoint names captured as this sandbox ended, so joined objects do not capture twice. */
    this.captured = new Set()
    /** The manager of its terminals (`sandbox.terminals`), made at the first. */
    this.terminalManager = undefined
    // An unfinished lifetime is no reason for Node to stay up.
    this.lifetime = new Lifetime(timeoutMs, () => this.expire(), { keepAlive: false })
  }

  /** When its lifetime ends (ms since the epoch), or null when it has none. */
  get expiresAt() {
    return this.lifetime.expiresAt
  }

  expire() {
    this.expired = true
    for (const member of [...this.members]) member._lifetimeExpired()
  }

  /** Kills its terminals and waits for them; every Terminal object of it is stale from then on. */
  closeTerminals() {
    return this.terminalManager ? this.terminalManager.close() : Promise.resolve()
  }

  end() {
    this.ended = true
    // A sandbox that ends takes its terminals with it, however it ends.
    this.closeTerminals().catch(() => {})
    this.lifetime.cancel()
    if (runningSandboxes.get(this.key) === this) runningSandboxes.delete(this.key)
  }
}

/** The sandbox methods that join, leave and end a running sandbox (added to NativeLocalSandbox). */
class LifetimeMethods {
  /** @internal Called by the running sandbox when its lifetime is over. */
  _lifetimeExpired() {
    if (!['running', 'starting', 'error'].includes(this.status)) return
    this.logger.info('Sandbox lifetime expired; stopping it', { sandbox: this.id, timeoutMs: this._timeoutMs })
    this._stop().catch((error) => this.logger.error('Stopping the sandbox at the end of its lifetime failed', { sandbox: this.id, error }))
  }

  /** @internal */
  _joinRunning(running) {
    if (running.ended) {
      const fresh = new RunningSandbox(running.key, this._timeoutMs, this.processes._tracked, this.processes._dismissed)
      runningSandboxes.set(running.key, fresh)
      running = fresh
    }
    this._running = running
    running.members.add(this)
    this.processes._tracked = running.tracked
    this.processes._dismissed = running.dismissed
    // One sandbox, one table of names, whichever of its objects spawns.
    running.names ??= this.processes._names
    this.processes.__names = running.names
  }

  /**
   * @internal Leaves the running sandbox; returns it, and whether leaving ended it. Stopping and
   * destroying end it for every object (`end`); a start that failed only leaves, and ends it
   * when nobody else is in it.
   */
  _leaveRunning({ end = false } = {}) {
    const running = this._running
    if (!running) return { running: undefined, ending: false }
    this._running = undefined
    running.members.delete(this)
    const ending = !running.ended && (end || running.members.size === 0)
    if (ending) running.end()
    return { running, ending }
  }

  /** @internal */
  async _leavingOnError(step) {
    try {
      return await step()
    } catch (error) {
      this._leaveRunning()
      throw error
    }
  }

  /** @internal Stops the other objects of a running sandbox that just ended. */
  async _stopJoined(running) {
    const others = [...running.members].filter((m) => m !== this && m.status === 'running')
    await Promise.all(others.map((m) => m._stop().catch((error) => m.logger.error('Stopping a joined sandbox failed', { sandbox: m.id, error }))))
  }
}

module.exports = { RunningSandbox, runningSandboxes, LifetimeMethods }
