'use strict'
// lib/faces/: what programs hold. ProcessManager (here) keeps the table of cores and hands out
// views of them: ProcessHandle (Mastra's shape), Process (the Processes API) and Terminal, with
// the reading methods they share in view.js. Requires lib/process/ and lib/native/ only.
//
// ProcessManager: Mastra's SandboxProcessManager surface (spawn / list / get / kill / release)
// and the Processes API (exec / getProcess / listProcesses / close) over one table of process
// cores. Every process leads its own process group and dies with this Node process.

const errors = require('../native/errors')
const { binding } = require('../native/native')
const { launch, listenersOf } = require('../process/core')
const { ProcessHandle } = require('./handle')
const { processInfo, pruneExited } = require('../process/mastra-rules')
const { Process } = require('./process')
const { Terminal } = require('./terminal')
const observe = require('../process/observe')
const { checkSignal } = require('../native/util')
const { NameTable, isName } = require('../process/names')
const { Launches } = require('../process/launches')
const { traceMethods } = require('../native/trace')

/** Exited processes the Processes API keeps for later reads (the container sandboxes keep 64). */
const KEEP_EXITED = 64

/**
 * A launch request as the native side reads it: the call's own values untouched, over the
 * environment layers and the working directory they resolve against. Only functions and
 * AbortSignals, which the native side cannot see, are checked here.
 * @param {unknown} command
 * @param {unknown} options
 * @param {Array<Record<string, string | undefined>>} layers
 * @param {string} cwd
 * @param {'cgroup' | 'process-group'} containment
 * @param {import('../../binding').NativeLogFiles | null} [logFiles]
 * @returns {import('../../binding').LaunchRequest}
 */
function request(command, options, layers, cwd, containment, logFiles) {
  const env = [{ PATH: process.env.PATH }]
  // An empty layer changes nothing: left out, it costs the native side nothing to read.
  for (const l of layers) if (!isEmptyLayer(l)) env.push(l)
  const req = { command, options, env, cwd, containment }
  if (logFiles) req.logFiles = logFiles
  return req
}

function closedError() {
  return new errors.ProcessManagerClosedError('this process manager is closed')
}

function isEmptyLayer(layer) {
  if (layer === null || typeof layer !== 'object' || Object.getPrototypeOf(layer) !== Object.prototype) return false
  for (const _ in layer) return false
  return true
}

class ProcessManager {
  /**
   * @param {{ env?: Record<string, string | undefined>, workingDirectory?: string, logDirectory?: string, logMaxBytes?: number, logKeep?: number }} [options]
   */
  constructor(options) {
    // The native rules check the options and resolve the working directory.
    this.workingDirectory = binding.managerWorkingDirectory(options)
    /**
     * How this manager contains its processes: 'cgroup' (each tree in a cgroup of its own, which
     * reaches descendants that left the process group) or 'process-group'.
     */
    this.containment = binding.resolveContainment(options ? options.containment : undefined)
    /**
     * @internal Where every process's log is also written, rotated by size: `{ directory,
     * maxBytes, keep }`, or null. Checked (and the directory made) here, so that a bad one is
     * refused before any process runs.
     */
    this._logFiles = binding.resolveLogFiles(options)
    /** The manager's env layer (its values are checked at each launch, where they are merged). */
    this.env = { ...(options && options.env) }
    /**
     * @internal The one table of this manager's processes: id → { core, handle, view, mastra,
     * listed, endedAt }. `mastra`: tracked by the Mastra surface (list/get/kill/release);
     * `listed`: visible to getProcess/listProcesses. A record goes when neither holds it.
     */
    this._records = new Map()
    /**
     * @internal The Mastra surface's records by pid (a string), as Mastra keys its own: a launch
     * whose pid the system reused from a process still tracked replaces it.
     */
    this._byPid = new Map()
    /** @internal Launches in flight, which close() waits for. */
    this._launches = new Launches()
    /** @internal The `name` option's table: a name to one live process of this manager. */
    // A name is free once either face would report its process's end: the Processes API's
    // (the whole group gone) or Mastra's (the root exited, its output drained), which a Mastra
    // handle's wait() resolves at and its next spawn of the name may follow at once.
    this._names = new NameTable(
      (r) => r.core.native.doneAtMs == null && r.core.exitCode() === undefined,
      (r) => r.core.currentPid,
    )
    this._closed = false
    this._closing = undefined
    this._inserts = 0
  }

  _assertOpen() {
    if (this._closed) throw closedError()
  }

  /**
   * Launches and records a process. The launch is in `_launches` until it is recorded, so that
   * close() racing it still finds and kills it before resolving. `mastra`: tracked by the Mastra
   * surface; `hold`: stdout held at its first byte for a reader (see `launch`), which a handle of
   * its own has; a Mastra handle fed through `listeners` (procvisor/mastra's) reads none.
   */
  _start(face, req, listeners, mastra, hold = mastra) {
    if (this._closed) return Promise.reject(closedError())
    const o = req.options
    const name = o !== null && typeof o === 'object' ? o.name : undefined
    try {
      this._names.reserve(name)
    } catch (e) {
      return Promise.reject(e)
    }
    const meta = { command: typeof req.command === 'string' ? req.command : undefined, manager: this, name }
    // A Mastra handle has a `reader` that replays stdout from its first byte. The launch is
    // recorded, and checked against a close, in the one reaction to the native launch.
    const recorded = launch(face, req, meta, listeners, hold).then(
      (core) => {
        const record = this._track(core, mastra)
        this._names.bind(name, record)
        if (this._closed) {
          core.native.signal(9, true)
          throw new errors.ProcessManagerClosedError('the process manager was closed while the process was starting; it was killed')
        }
        return record
      },
      (e) => {
        this._names.release(name)
        throw e
      },
    )
    return this._launches.track(recorded)
  }

  _track(core, mastra) {
    const record = { core, handle: undefined, view: undefined, terminal: undefined, mastra, listed: true, endedAt: undefined }
    this._records.set(core.id, record)
    if (mastra) {
      record.handle = new ProcessHandle(core)
      const pid = record.handle.pid
      const earlier = this._byPid.get(pid)
      if (earlier) this._forget(earlier, 'mastra')
      this._byPid.set(pid, record)
    }
    this._prune(false)
    return record
  }

  _forget(record, face) {
    record[face] = false
    if (face === 'mastra' && this._byPid.get(record.handle.pid) === record) this._byPid.delete(record.handle.pid)
    if (!record.mastra && !record.listed) {
      this._records.delete(record.core.id)
      this._names.release(record.core.name, record)
    }
  }

  /**
   * Unlists exited records beyond the newest KEEP_EXITED. Amortized on the launch path (once per
   * KEEP_EXITED inserts: a pass asks every record for its state), exact for lookups.
   */
  _prune(exact = true) {
    if (!exact && ++this._inserts % KEEP_EXITED !== 0) return
    // The Mastra surface's table: exited handles are kept until read by `get` or released, as a
    // sandbox keeps them, and as there, never more than the rule's number.
    pruneExited(
      this._byPid.values(),
      (r) => r.handle.exitCode !== undefined,
      (r) => this._forget(r, 'mastra'),
      this._byPid.size,
    )
    const exited = []
    for (const r of this._records.values()) {
      if (!r.listed) continue
      if (r.endedAt === undefined) r.endedAt = r.core.native.doneAtMs ?? undefined
      if (r.endedAt !== undefined) exited.push(r)
    }
    if (exited.length <= KEEP_EXITED) return
    exited.sort((a, b) => a.endedAt - b.endedAt)
    for (const r of exited.slice(0, exited.length - KEEP_EXITED)) this._forget(r, 'listed')
  }

  _mastraRecord(pid) {
    if (isName(pid)) {
      const r = this._names.get(pid)
      return r && r.mastra ? r : undefined
    }
    return this._byPid.get(String(pid))
  }

  /**
   * @internal The Mastra surface's handle of `pid` without reading it (no prune on read), for a
   * server of this manager to many clients (a persistent sandbox's supervisor): by the pid it was
   * spawned with, its name, or the pid of a service's current run.
   */
  _find(pid) {
    const r = this._mastraRecord(pid)
    if (r) return r.handle
    const key = String(pid)
    for (const r of this._byPid.values()) if (r.core.service && String(r.core.currentPid) === key) return r.handle
    return undefined
  }

  /** @internal Every handle the Mastra surface tracks, in spawn order, the exited beyond its cap gone (see `_find`). */
  _handles() {
    this._prune()
    return [...this._byPid.values()].map((r) => r.handle)
  }

  // ---- Mastra surface ------------------------------------------------------------------------

  /**
   * Runs `command` with `/bin/sh -c` in a new process group. Resolves with the handle once the
   * process is started (before any output callback fires).
   */
  spawn(command, options) {
    const o = options || {}
    let listeners
    try {
      this._assertOpen()
      // Checked before anything runs: a bad value found after the spawn would leave the process
      // behind. A bad value rejects, as from an `async` function.
      listeners = listenersOf(o)
      checkSignal(o.abortSignal, 'abortSignal')
    } catch (e) {
      return Promise.reject(e)
    }
    // A chain rather than an `async` function, as `exec`.
    return this._start('shell', request(command, options, [this.env], this.workingDirectory, this.containment, this._logFiles), listeners, true).then(({ handle }) => {
      if (o.abortSignal) {
        const signal = o.abortSignal
        if (signal.aborted) handle.kill()
        // No cleanup wait here: a pending native wait would keep Node alive for the process's
        // whole life. A late abort finds the process exited and kill() returns false.
        else signal.addEventListener('abort', () => handle.kill(), { once: true })
      }
      return handle
    })
  }

  /**
   * Every tracked handle, running or exited (until released or pruned by `get`), with the tree's
   * CPU time (`cpuTimeMs`) and memory peak where its cgroup measures them.
   */
  async list() {
    return [...this._byPid.values()].map((r) => observe.addUsage(processInfo(r.handle), r.core.native))
  }

  /** The handle for `pid` (or a process name); after the process exited, the first `get` returns it and forgets it. */
  async get(pid) {
    const r = this._mastraRecord(pid)
    if (!r) return undefined
    if (r.handle.exitCode !== undefined) this._forget(r, 'mastra')
    return r.handle
  }

  /**
   * Kills the group of `pid` (SIGKILL, or `signal`: a number or a name), waits for it to exit,
   * forgets it. `false` for an unknown pid.
   */
  async kill(pid, signal) {
    if (signal !== undefined) binding.checkSignal(signal)
    const r = this._mastraRecord(pid)
    if (!r) return false
    const killed = await r.handle.kill(signal)
    await r.handle.wait()
    this._forget(r, 'mastra')
    return killed
  }

  /** Forgets a handle without touching its process. */
  release(pid) {
    const r = this._mastraRecord(pid)
    if (r) this._forget(r, 'mastra')
  }

  // ---- the Processes API ---------------------------------------------------------------------

  /**
   * Starts `command` (argv: executable, then arguments; no shell). Resolves once launched.
   * @param {readonly string[]} command
   */
  exec(command, options) {
    // A chain rather than an `async` function: two promises fewer on every launch's path.
    return this._start('argv', request(command, options, [this.env], this.workingDirectory, this.containment, this._logFiles), [], false).then((record) =>
      this._view(record),
    )
  }

  // ---- stacks --------------------------------------------------------------------------------

  /** @internal What lib/stack/ brings up and down on this manager. */
  _stackTarget() {
    return require('../stack/targets').managerTarget(this)
  }

  // ---- the Terminals API --------------------------------------------------------------------

  /**
   * Starts `command` (an argv, default `['/bin/sh']`) on a terminal of `cols` × `rows`, in `cwd`
   * with `env` over the manager's. Resolves once launched.
   */
  async createTerminal(options) {
    this._assertOpen()
    const record = await this._start('terminal', request(undefined, options, [this.env], this.workingDirectory, this.containment, this._logFiles), [], false)
    record.terminal = new Terminal(record.core)
    return record.terminal
  }

  /** The terminal with this id, or null. */
  async getTerminal(id) {
    if (this._closed || typeof id !== 'string') return null
    this._prune()
    const r = this._records.get(id)
    return r && r.listed && r.terminal ? r.terminal : null
  }

  /** ProcessStatus of every terminal: running ones and the last 64 exited. */
  async listTerminals() {
    if (this._closed) return []
    return this._statuses((r) => r.terminal)
  }

  /**
   * The statuses of the listed records that `wanted` keeps. A process can end between the prune
   * and the reading of its status (a Mastra handle's wait() resolves at its end, which the native
   * state may see a moment later): the statuses read decide, so that no more than KEEP_EXITED
   * exited ones are ever listed.
   */
  _statuses(wanted) {
    this._prune()
    const rows = []
    for (const r of this._records.values()) if (r.listed) rows.push([r, observe.status(r.core)])
    const exited = rows.filter(([, s]) => s.state === 'exited')
    if (exited.length > KEEP_EXITED) {
      const endOf = (r) => r.endedAt ?? r.core.native.doneAtMs ?? Infinity
      exited.sort(([a], [b]) => endOf(a) - endOf(b))
      for (const [r] of exited.slice(0, exited.length - KEEP_EXITED)) this._forget(r, 'listed')
    }
    return rows.filter(([r]) => r.listed && wanted(r)).map(([, s]) => s)
  }

  _view(record) {
    if (!record.view) record.view = new Process(record.core)
    return record.view
  }

  /** The process with this id (or name), or null (never throws for a missing one). */
  async getProcess(id) {
    if (this._closed || typeof id !== 'string') return null
    this._prune()
    const r = this._records.get(id) ?? this._names.get(id)
    return r && r.listed ? this._view(r) : null
  }

  /** ProcessStatus of every tracked process: running ones and the last 64 exited. */
  async listProcesses() {
    if (this._closed) return []
    return this._statuses(() => true)
  }

  /**
   * Kills every process of this manager (SIGKILL to each group, or its `shutdown`: its signal,
   * then SIGKILL after its `timeoutMs`), launches in flight included, waits for them to be gone,
   * and makes every handle stale. Idempotent.
   */
  close() {
    if (!this._closing) this._closing = this._close()
    return this._closing
  }

  /**
   * @internal close() as the end of a sandbox's lifetime (`ms`) does it: what still runs then is
   * marked as killed by it (its Mastra end says so, ending in mastra-rules.js); what ended
   * before ended on its own.
   */
  _closeAtLifetime(ms) {
    for (const r of this._records.values()) if (r.core.exitCode() === undefined) r.core.lifetimeMs = ms
    return this.close()
  }

  async _close() {
    // A stack brought up here goes down first, in the reverse of its start order, each process
    // through its own shutdown; what is left then ends as below.
    if (this._stack) await this.down().catch(() => {})
    this._closed = true
    await this._launches.settled()
    const natives = [...this._records.values()].map((r) => r.core.native)
    for (const n of natives) n.shutdown()
    // A shutdown's own wait comes before its SIGKILL, and so before the bound on the end.
    await Promise.all(natives.map((n) => n.waitDone(10_000 + n.shutdownMs)))
    // Their logs on disk are complete, and no file is made after this resolves.
    await Promise.all(natives.map((n) => n.logsWritten()))
    this._records.clear()
    this._byPid.clear()
    this._names.clear()
    binding.trimCgroups()
  }
}

traceMethods(ProcessManager, ['spawn', 'exec', 'createTerminal', 'kill', 'close'])

// up(config) / down(config?): a stack of named processes (lib/stack/).
const { StackMethods } = require('../stack/targets')
for (const key of Object.keys(StackMethods)) Object.defineProperty(ProcessManager.prototype, key, { value: StackMethods[key], writable: true, configurable: true })

module.exports = { ProcessManager, request }
