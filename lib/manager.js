'use strict'
// ProcessManager: Mastra's SandboxProcessManager surface (spawn / list / get / kill / release)
// and the seed-002 Processes API (exec / getProcess / listProcesses / close) on one registry of
// native processes. Every process leads its own process group and dies with this Node process.

const path = require('node:path')
const { binding, realm } = require('./native')
const errors = require('./errors')
const { ProcessHandle, processInfo, scheduleDrain } = require('./handle')
const { Process } = require('./process')
const { checkCount, checkMs, checkSignal, describe } = require('./util')

const DEFAULT_RETAINED = 1024 * 1024
/** Exited processes the seed-002 face keeps for later reads, as the peer does. */
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
    /** @internal Mastra tracking: pid string → handle. */
    this._handles = new Map()
    /** @internal seed-002 records: id → { native, argv, cwd, view }. */
    this._records = new Map()
    this._closed = false
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

  async _start(spec, wake) {
    this._assertOpen()
    const native = await errors.call(() => binding.spawnProcess({ ...spec, owner: realm }, wake))
    if (this._closed) {
      native.signal(9, true)
      throw new errors.ProcessManagerClosedError('the process manager was closed while the process was starting; it was killed')
    }
    return native
  }

  _track(native, argv, cwd) {
    this._records.set(native.id, { native, argv, cwd, view: undefined, endedAt: undefined })
    this._prune(false)
  }

  /**
   * Forgets exited records beyond the newest KEEP_EXITED. Amortized on the spawn path (once per
   * KEEP_EXITED inserts: a pass asks every record for its state), exact for lookups.
   */
  _prune(exact = true) {
    if (!exact && ++this._inserts % KEEP_EXITED !== 0) return
    const exited = []
    for (const [id, r] of this._records) {
      if (r.endedAt === undefined) {
        const st = r.native.state()
        if (st.done) r.endedAt = st.endedAtMs
      }
      if (r.endedAt !== undefined) exited.push([id, r.endedAt])
    }
    if (exited.length <= KEEP_EXITED) return
    exited.sort((a, b) => a[1] - b[1])
    for (const [id] of exited.slice(0, exited.length - KEEP_EXITED)) this._records.delete(id)
  }

  // ---- Mastra surface ------------------------------------------------------------------------

  /**
   * Runs `command` with `/bin/sh -c` in a new process group. Resolves with the handle once the
   * process is started (before any output callback fires).
   */
  async spawn(command, options) {
    this._assertOpen()
    if (typeof command !== 'string' || command.length === 0) {
      throw new errors.InvalidProcessCommandError(`command must be a non-empty string, got ${describe(command)}`)
    }
    const o = options === undefined || options === null ? {} : options
    if (typeof o !== 'object') throw errors.invalidOption(`spawn options must be an object, got ${describe(o)}`)
    let retain = o.maxRetainedBytes === undefined ? DEFAULT_RETAINED : o.maxRetainedBytes
    if (!(retain === Infinity || (typeof retain === 'number' && Number.isInteger(retain) && retain >= 0))) {
      throw errors.invalidOption(`maxRetainedBytes must be a non-negative integer or Infinity, got ${describe(retain)}`)
    }
    if (retain !== Infinity && retain > Number.MAX_SAFE_INTEGER) retain = Infinity
    const timeout = checkMs('timeout', o.timeout)
    const grace = checkMs('gracePeriod', o.gracePeriod)
    // Checked before anything runs: a bad value found after the spawn would leave the process behind.
    checkSignal(o.abortSignal, 'abortSignal')
    for (const key of ['onStdout', 'onStderr']) {
      if (o[key] !== undefined && o[key] !== null && typeof o[key] !== 'function') throw errors.invalidOption(`${key} must be a function, got ${describe(o[key])}`)
    }
    const stdinMode = o.stdinMode === undefined ? 'pipe' : o.stdinMode
    if (stdinMode !== 'pipe' && stdinMode !== 'ignore') throw errors.invalidOption(`stdinMode must be 'pipe' or 'ignore', got ${describe(stdinMode)}`)
    const cwd = this._resolveCwd(o.cwd)
    // `argv` (an executable and its arguments) runs without a shell; `command` is then its label.
    const argv = o.argv === undefined ? ['/bin/sh', '-c', command] : checkArgv('argv', o.argv)
    let handle
    const wake = o.onStdout || o.onStderr ? () => handle && scheduleDrain(handle) : undefined
    const native = await this._start(
      {
        argv,
        env: this._baseEnv(o.env),
        cwd,
        stdinPipe: stdinMode === 'pipe',
        timeoutMs: timeout ? nativeMs(timeout) : undefined,
        graceMs: nativeMs(grace),
        retainBytes: retain === Infinity ? undefined : retain,
        limits: checkLimits(o.limits),
      },
      wake,
    )
    handle = new ProcessHandle(native, { manager: this, argv, cwd, timeout, command, onStdout: o.onStdout, onStderr: o.onStderr })
    handle._pumping = Boolean(wake)
    // Output that arrived before `handle` existed waits for this first drain, which runs after
    // the caller got the handle (Mastra: the handle resolves before any output callback).
    if (wake) scheduleDrain(handle)
    this._handles.set(handle.pid, handle)
    this._track(native, argv, cwd)
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
    return [...this._handles.values()].map(processInfo)
  }

  /** The handle for `pid`; after the process exited, the first `get` returns it and forgets it. */
  async get(pid) {
    const key = String(pid)
    const handle = this._handles.get(key)
    if (!handle) return undefined
    if (handle.exitCode !== undefined) this._handles.delete(key)
    return handle
  }

  /** Kills the group of `pid`, waits for it, forgets it. `false` for an unknown pid. */
  async kill(pid) {
    const key = String(pid)
    const handle = this._handles.get(key)
    if (!handle) return false
    const killed = await handle.kill()
    await handle.wait()
    this._handles.delete(key)
    return killed
  }

  /** Forgets a handle without touching its process. */
  release(pid) {
    this._handles.delete(String(pid))
  }

  // ---- seed-002 Processes API ----------------------------------------------------------------

  /**
   * Starts `command` (argv: executable, then arguments; no shell). Resolves once launched.
   * @param {readonly string[]} command
   */
  async exec(command, options) {
    this._assertOpen()
    if (!Array.isArray(command)) throw new errors.InvalidProcessCommandError(`command must be an argv array, got ${describe(command)}`)
    if (command.length === 0 || typeof command[0] !== 'string' || command[0] === '') {
      throw new errors.InvalidProcessCommandError('command[0] must be a non-empty string')
    }
    command.forEach((a, i) => {
      if (typeof a !== 'string') throw new errors.InvalidProcessCommandError(`command[${i}] must be a string, got ${describe(a)}`)
    })
    const o = options === undefined || options === null ? {} : options
    if (typeof o !== 'object') throw errors.invalidOption(`exec options must be an object, got ${describe(o)}`)
    const timeout = checkMs('timeout', o.timeout)
    const cwd = this._resolveCwd(o.cwd)
    const argv = Object.freeze([...command])
    const native = await this._start({
      argv: [...argv],
      env: this._baseEnv(o.env),
      cwd,
      stdinPipe: false,
      timeoutMs: timeout ? nativeMs(timeout) : undefined,
      graceMs: nativeMs(checkMs('gracePeriod', o.gracePeriod)),
      retainBytes: 0,
      limits: checkLimits(o.limits),
    })
    this._track(native, argv, cwd)
    return this._view(native.id)
  }

  _view(id) {
    const r = this._records.get(id)
    if (!r) return null
    if (!r.view) r.view = new Process(r.native, this, r.argv, r.cwd)
    return r.view
  }

  /** The process with this id, or null (never throws for a missing one). */
  async getProcess(id) {
    if (this._closed || typeof id !== 'string') return null
    this._prune()
    return this._view(id)
  }

  /** ProcessStatus of every tracked process: running ones and the last 64 exited. */
  async listProcesses() {
    if (this._closed) return []
    this._prune()
    return [...this._records.values()].map((r) => this._view(r.native.id)).map((p) => require('./observe').status(p._native, { argv: p._argv, cwd: p._cwd }))
  }

  /**
   * Kills every process of this manager (SIGKILL to each group), waits for them to be gone, and
   * makes every handle stale. Idempotent.
   */
  async close() {
    if (this._closed) return
    this._closed = true
    const natives = [...this._records.values()].map((r) => r.native)
    for (const n of natives) n.signal(9, true)
    await Promise.all(natives.map((n) => n.waitDone(10_000)))
    this._handles.clear()
    this._records.clear()
  }
}

module.exports = { ProcessManager, mergeEnv }
