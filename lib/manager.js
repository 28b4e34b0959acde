'use strict'
// ProcessManager: Mastra's SandboxProcessManager surface (spawn / list / get / kill / release)
// and the Processes API (exec / getProcess / listProcesses / close) over one table of process
// cores. Every process leads its own process group and dies with this Node process.

const path = require('node:path')
const errors = require('./errors')
const { launch, listenersOf } = require('./core')
const { ProcessHandle, processInfo } = require('./handle')
const { Process } = require('./process')
const observe = require('./observe')
const { checkCount, checkMs, checkSignal, describe } = require('./util')

const DEFAULT_RETAINED = 1024 * 1024
/** Exited processes the Processes API keeps for later reads (the container sandboxes keep 64). */
const KEEP_EXITED = 64

function checkEnvObject(name, env) {
  if (env === undefined || env === null) return {}
  if (typeof env !== 'object' || Array.isArray(env)) {
    throw new errors.InvalidProcessEnvironmentError(`${name} must be an object of strings, got ${describe(env)}`)
  }
  return env
}

/** Merges env layers into [name, value] pairs; `undefined` values drop the name. */
function mergeEnv(...layers) {
  const out = new Map()
  for (const layer of layers) {
    for (const [k, v] of Object.entries(layer)) {
      if (v === undefined) {
        out.delete(k)
        continue
      }
      if (typeof v !== 'string') {
        throw new errors.InvalidProcessEnvironmentError(`the value of ${k} must be a string, got ${describe(v)}`)
      }
      out.set(k, v)
    }
  }
  return [...out]
}

/** A copy of `argv` after checking it is a non-empty array of strings with a non-empty first. */
function checkArgv(name, argv) {
  if (!Array.isArray(argv)) throw new errors.InvalidProcessCommandError(`${name} must be an array of strings, got ${describe(argv)}`)
  if (argv.length === 0 || typeof argv[0] !== 'string' || argv[0] === '') {
    throw new errors.InvalidProcessCommandError(`${name}[0] must be a non-empty string`)
  }
  argv.forEach((a, i) => {
    if (typeof a !== 'string') throw new errors.InvalidProcessCommandError(`${name}[${i}] must be a string, got ${describe(a)}`)
  })
  return [...argv]
}

/**
 * Milliseconds as the native side takes them: whole (a fraction rounds up, so 1.5 is not refused
 * as "not an integer") and at most Number.MAX_SAFE_INTEGER (about 285,000 years: a larger finite
 * timeout cannot expire in practice, so it is treated as that).
 */
function nativeMs(ms) {
  return ms === undefined ? undefined : Math.min(Math.ceil(ms), Number.MAX_SAFE_INTEGER)
}

function checkLimits(limits) {
  if (limits === undefined) return undefined
  if (typeof limits !== 'object' || limits === null || Array.isArray(limits)) throw errors.invalidOption(`limits must be an object, got ${describe(limits)}`)
  const out = {}
  for (const k of ['addressSpace', 'cpuSeconds', 'openFiles', 'fileSize', 'processes']) {
    if (limits[k] !== undefined) out[k] = checkCount(`limits.${k}`, limits[k])
    // Leave a limit out for "unlimited"; above 2^53 - 1 the number is no longer exact.
    if (out[k] > Number.MAX_SAFE_INTEGER) throw errors.invalidOption(`limits.${k} must be at most Number.MAX_SAFE_INTEGER, got ${describe(limits[k])}`)
  }
  for (const k of Object.keys(limits)) {
    if (!(k in out) && limits[k] !== undefined) throw errors.invalidOption(`unknown limit ${JSON.stringify(k)}`)
  }
  return out
}

/**
 * Checks the options of a shell launch (the Mastra surface's `spawn`) and turns them into a native
 * spec. Shared by `ProcessManager.spawn` and `procvisor/mastra`, so that both faces refuse the
 * same values in the same way.
 */
function shellSpec(command, o, { cwd, env }) {
  if (typeof command !== 'string' || command.length === 0) {
    throw new errors.InvalidProcessCommandError(`command must be a non-empty string, got ${describe(command)}`)
  }
  let retain = o.maxRetainedBytes === undefined ? DEFAULT_RETAINED : o.maxRetainedBytes
  if (!(retain === Infinity || (typeof retain === 'number' && Number.isInteger(retain) && retain >= 0))) {
    throw errors.invalidOption(`maxRetainedBytes must be a non-negative integer or Infinity, got ${describe(retain)}`)
  }
  if (retain !== Infinity && retain > Number.MAX_SAFE_INTEGER) retain = Infinity
  const timeout = checkMs('timeout', o.timeout)
  const grace = checkMs('gracePeriod', o.gracePeriod)
  // Checked before anything runs: a bad value found after the spawn would leave the process behind.
  checkSignal(o.abortSignal, 'abortSignal')
  const listeners = listenersOf(o)
  const stdinMode = o.stdinMode === undefined ? 'pipe' : o.stdinMode
  if (stdinMode !== 'pipe' && stdinMode !== 'ignore') throw errors.invalidOption(`stdinMode must be 'pipe' or 'ignore', got ${describe(stdinMode)}`)
  // `argv` (an executable and its arguments) runs without a shell; `command` is then its label.
  const argv = o.argv === undefined ? ['/bin/sh', '-c', command] : checkArgv('argv', o.argv)
  const spec = {
    argv,
    env,
    cwd,
    stdinPipe: stdinMode === 'pipe',
    timeoutMs: timeout ? nativeMs(timeout) : undefined,
    graceMs: nativeMs(grace),
    retainBytes: retain === Infinity ? undefined : retain,
    limits: checkLimits(o.limits),
  }
  return { spec, meta: { argv, cwd, command, timeout }, listeners }
}

class ProcessManager {
  /**
   * @param {{ env?: Record<string, string | undefined>, workingDirectory?: string }} [options]
   */
  constructor(options) {
    const o = options === undefined || options === null ? {} : options
    if (typeof o !== 'object') throw errors.invalidOption(`ProcessManager options must be an object, got ${describe(o)}`)
    this.env = { ...checkEnvObject('env', o.env) }
    if (o.workingDirectory !== undefined && typeof o.workingDirectory !== 'string') {
      throw new errors.InvalidProcessCwdError(`workingDirectory must be a string, got ${describe(o.workingDirectory)}`)
    }
    this.workingDirectory = path.resolve(o.workingDirectory === undefined ? process.cwd() : o.workingDirectory)
    /**
     * @internal The one table of this manager's processes: id → { core, handle, view, mastra,
     * listed, endedAt }. `mastra`: tracked by the Mastra surface (list/get/kill/release);
     * `listed`: visible to getProcess/listProcesses. A record goes when neither holds it.
     */
    this._records = new Map()
    /** @internal Launches in flight, which close() waits for. */
    this._launching = new Set()
    this._closed = false
    this._closing = undefined
    this._inserts = 0
  }

  _assertOpen() {
    if (this._closed) throw new errors.ProcessManagerClosedError('this process manager is closed')
  }

  _resolveCwd(cwd) {
    if (cwd === undefined || cwd === null) return this.workingDirectory
    if (typeof cwd !== 'string') throw new errors.InvalidProcessCwdError(`cwd must be a string, got ${describe(cwd)}`)
    return path.resolve(this.workingDirectory, cwd)
  }

  _baseEnv(callEnv) {
    return mergeEnv({ PATH: process.env.PATH }, this.env, checkEnvObject('env', callEnv))
  }

  /**
   * Launches and records a process. The launch is in `_launching` until it is recorded, so that
   * close() racing it still finds and kills it before resolving.
   */
  async _start({ spec, meta, listeners }, mastra) {
    this._assertOpen()
    const recorded = launch(spec, { ...meta, manager: this }, listeners).then((core) => this._track(core, mastra))
    this._launching.add(recorded)
    const settled = () => this._launching.delete(recorded)
    recorded.then(settled, settled)
    const record = await recorded
    if (this._closed) {
      record.core.native.signal(9, true)
      throw new errors.ProcessManagerClosedError('the process manager was closed while the process was starting; it was killed')
    }
    return record
  }

  _track(core, mastra) {
    const record = { core, handle: undefined, view: undefined, mastra, listed: true, endedAt: undefined }
    if (mastra) record.handle = new ProcessHandle(core)
    this._records.set(core.id, record)
    this._prune(false)
    return record
  }

  _forget(record, face) {
    record[face] = false
    if (!record.mastra && !record.listed) this._records.delete(record.core.id)
  }

  /**
   * Unlists exited records beyond the newest KEEP_EXITED. Amortized on the launch path (once per
   * KEEP_EXITED inserts: a pass asks every record for its state), exact for lookups.
   */
  _prune(exact = true) {
    if (!exact && ++this._inserts % KEEP_EXITED !== 0) return
    const exited = []
    for (const r of this._records.values()) {
      if (!r.listed) continue
      if (r.endedAt === undefined) {
        const st = r.core.native.state()
        if (st.done) r.endedAt = st.endedAtMs
      }
      if (r.endedAt !== undefined) exited.push(r)
    }
    if (exited.length <= KEEP_EXITED) return
    exited.sort((a, b) => a.endedAt - b.endedAt)
    for (const r of exited.slice(0, exited.length - KEEP_EXITED)) this._forget(r, 'listed')
  }

  _mastraRecord(pid) {
    const key = String(pid)
    for (const r of this._records.values()) if (r.mastra && r.handle.pid === key) return r
    return undefined
  }

  // ---- Mastra surface ------------------------------------------------------------------------

  /**
   * Runs `command` with `/bin/sh -c` in a new process group. Resolves with the handle once the
   * process is started (before any output callback fires).
   */
  async spawn(command, options) {
    this._assertOpen()
    const o = options === undefined || options === null ? {} : options
    if (typeof o !== 'object') throw errors.invalidOption(`spawn options must be an object, got ${describe(o)}`)
    const launchSpec = shellSpec(command, o, { cwd: this._resolveCwd(o.cwd), env: this._baseEnv(o.env) })
    const { handle } = await this._start(launchSpec, true)
    if (o.abortSignal) {
      const signal = o.abortSignal
      if (signal.aborted) handle.kill()
      // No cleanup wait here: a pending native wait would keep Node alive for the process's
      // whole life. A late abort finds the process exited and kill() returns false.
      else signal.addEventListener('abort', () => handle.kill(), { once: true })
    }
    return handle
  }

  /** Every tracked handle, running or exited (until released or pruned by `get`). */
  async list() {
    return [...this._records.values()].filter((r) => r.mastra).map((r) => processInfo(r.handle))
  }

  /** The handle for `pid`; after the process exited, the first `get` returns it and forgets it. */
  async get(pid) {
    const r = this._mastraRecord(pid)
    if (!r) return undefined
    if (r.handle.exitCode !== undefined) this._forget(r, 'mastra')
    return r.handle
  }

  /** Kills the group of `pid`, waits for it, forgets it. `false` for an unknown pid. */
  async kill(pid) {
    const r = this._mastraRecord(pid)
    if (!r) return false
    const killed = await r.handle.kill()
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
  async exec(command, options) {
    this._assertOpen()
    if (!Array.isArray(command)) throw new errors.InvalidProcessCommandError(`command must be an argv array, got ${describe(command)}`)
    const argv = Object.freeze(checkArgv('command', command))
    const o = options === undefined || options === null ? {} : options
    if (typeof o !== 'object') throw errors.invalidOption(`exec options must be an object, got ${describe(o)}`)
    const timeout = checkMs('timeout', o.timeout)
    const cwd = this._resolveCwd(o.cwd)
    const spec = {
      argv: [...argv],
      env: this._baseEnv(o.env),
      cwd,
      stdinPipe: false,
      timeoutMs: timeout ? nativeMs(timeout) : undefined,
      graceMs: nativeMs(checkMs('gracePeriod', o.gracePeriod)),
      retainBytes: 0,
      limits: checkLimits(o.limits),
    }
    const record = await this._start({ spec, meta: { argv, cwd, timeout }, listeners: [] }, false)
    return this._view(record)
  }

  _view(record) {
    if (!record.view) record.view = new Process(record.core)
    return record.view
  }

  /** The process with this id, or null (never throws for a missing one). */
  async getProcess(id) {
    if (this._closed || typeof id !== 'string') return null
    this._prune()
    const r = this._records.get(id)
    return r && r.listed ? this._view(r) : null
  }

  /** ProcessStatus of every tracked process: running ones and the last 64 exited. */
  async listProcesses() {
    if (this._closed) return []
    this._prune()
    return [...this._records.values()].filter((r) => r.listed).map((r) => observe.status(r.core))
  }

  /**
   * Kills every process of this manager (SIGKILL to each group), launches in flight included,
   * waits for them to be gone, and makes every handle stale. Idempotent.
   */
  close() {
    if (!this._closing) this._closing = this._close()
    return this._closing
  }

  async _close() {
    this._closed = true
    await Promise.allSettled([...this._launching])
    const natives = [...this._records.values()].map((r) => r.core.native)
    for (const n of natives) n.signal(9, true)
    await Promise.all(natives.map((n) => n.waitDone(10_000)))
    this._records.clear()
  }
}

module.exports = { ProcessManager, mergeEnv, shellSpec }
