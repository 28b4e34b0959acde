'use strict'
/**
 * procvisor/mastra: procvisor as the process backend of Mastra's `LocalSandbox`.
 *
 *   import { NativeLocalSandbox as LocalSandbox } from 'procvisor/mastra'
 *
 * `NativeLocalSandbox` is Mastra's own `LocalSandbox` (every option, lifecycle, mounts, isolation,
 * checkpoints, instructions) with its execa-based process manager swapped for
 * `NativeProcessManager`, whose handles (`NativeProcessHandle`) run on procvisor's native core:
 * process groups killed as a whole, SIGTERM → SIGKILL on timeout, no orphans when Node exits.
 *
 * The classes extend the base classes of the application's own `@mastra/core/workspace` (an
 * optional dependency, listed in `peerDependencies`), so Mastra's env overlay, `ensureRunning`, tracking, output retention,
 * listeners and reader/writer streams are Mastra's code, not a copy.
 *
 * This file is the CommonJS entry: it uses the CommonJS build of `@mastra/core/workspace` and
 * loads it on first use of an export. The ES module entry (`mastra.mjs`) builds the same classes
 * over the ES module build, so the classes always extend the Mastra that the application imports.
 * Both entries share `defineMastraClasses`.
 */

const path = require('node:path')
const { ProcessHandle: CoreProcessHandle } = require('./lib/handle.js')
const { processInfo } = require('./lib/handle.js')
const { launch, listenersOf, mastraExitCode } = require('./lib/core.js')
const { request } = require('./lib/manager.js')
const {
  ProcessStdinUnavailableError,
  SandboxSnapshotError,
  SandboxSupervisorLostError,
  SandboxProtocolError,
  SandboxAccessError,
  ProcessNotFoundError,
  invalidOption,
} = require('./lib/errors.js')
const { Connection, findSupervisor, startSupervisor } = require('./lib/persistent/client.js')
const { defineRemoteHandle } = require('./lib/persistent/handles.js')
const { checkId, socketPath } = require('./lib/persistent/location.js')
const { binding } = require('./lib/native.js')
const { absoluteDirectory, absoluteCheckpoints, sandboxDirectory, commandCwd } = require('./lib/paths.js')
const { traceMethods } = require('./lib/trace.js')
const { requireFromApplication } = require('./lib/application.js')
const fsp = require('node:fs/promises')
const crypto = require('node:crypto')

/** Mastra's `shellQuote` (not exported by @mastra/core): safe words pass, the rest is single-quoted. */
function shellQuote(arg) {
  if (/^[a-zA-Z0-9._\-/=:@]+$/.test(arg)) return arg
  return `'${arg.replace(/'/g, "'\\''")}'`
}

/** How the sandbox's processes are contained: a cgroup each where this Node process has one. */
function containment() {
  return binding.resolveContainment('auto')
}

/** Env values as the child sees them (Node's rule: `undefined` drops the name, others become strings). */
function envStrings(env) {
  const out = {}
  for (const [k, v] of Object.entries(env || {})) out[k] = v === undefined ? undefined : String(v)
  return out
}

// ---- NativeLocalSandbox's lifetime, reconnection and checkpoints ------------------------------

/**
 * The running sandboxes of this Node process, by id and resolved working directory. A sandbox
 * started while another with the same pair runs joins it (its processes and its lifetime)
 * rather than starting a second one. Module-level, so the CommonJS and ES module entries share it.
 */
const runningSandboxes = new Map()

/** setTimeout's longest delay; a longer lifetime is waited for in steps. */
const MAX_TIMER_MS = 2 ** 31 - 1

/** One running sandbox, shared by every NativeLocalSandbox object that started into it. */
class RunningSandbox {
  constructor(key, timeoutMs, tracked, dismissed) {
    this.key = key
    this.timeoutMs = timeoutMs
    /** Whether the lifetime ran out: the stop that follows reports its kills as the lifetime's. */
    this.expired = false
    this.tracked = tracked
    this.dismissed = dismissed
    this.members = new Set()
    this.ended = false
    this.destroying = false
    /** Checkpoint names captured as this sandbox ended, so joined objects do not capture twice. */
    this.captured = new Set()
    this.expiresAt = timeoutMs === undefined ? undefined : Date.now() + timeoutMs
    this.timer = undefined
    if (this.expiresAt !== undefined) this.arm()
  }

  arm() {
    const left = Math.max(0, this.expiresAt - Date.now())
    this.timer = setTimeout(() => (this.expiresAt - Date.now() > 0 ? this.arm() : this.expire()), Math.min(left, MAX_TIMER_MS))
    // An unfinished lifetime is no reason for Node to stay up.
    this.timer.unref()
  }

  expire() {
    this.timer = undefined
    this.expired = true
    for (const member of [...this.members]) member._lifetimeExpired()
  }

  end() {
    this.ended = true
    if (this.timer) clearTimeout(this.timer)
    this.timer = undefined
    if (runningSandboxes.get(this.key) === this) runningSandboxes.delete(this.key)
  }
}

/**
 * The longest checkpoint name made from an id, in bytes: with the prefixes and suffixes of the
 * capture's temporary entries (`.tmp-owner-<name>-<hex>`) it stays within a file name's 255.
 */
const MAX_CHECKPOINT_NAME = 200

/**
 * The checkpoint name of a sandbox that has none configured: its id when that is a valid name of
 * at most 200 bytes, otherwise a valid name made from it (cut to fit), with a hash of the whole
 * id so two ids never share one and a later start with the same id finds it again.
 */
function checkpointNameFor(id) {
  const text = String(id)
  const safe = text.replace(/[^A-Za-z0-9._-]+/g, '-').replace(/\.{2,}/g, '.')
  const name = /^[A-Za-z0-9]/.test(safe) ? safe : `sandbox-${safe}`
  if (name === text && name.length <= MAX_CHECKPOINT_NAME) return name
  const hash = crypto.createHash('sha256').update(text).digest('hex').slice(0, 10)
  // ASCII only by now: a character is a byte.
  return `${name.slice(0, MAX_CHECKPOINT_NAME - hash.length - 1)}-${hash}`
}

/**
 * Whether a checkpoint directory exists. Mastra's rule: a capture by Mastra's `LocalSandbox` (or
 * one of ours where the filesystem cannot swap in one step) renames the old checkpoint away an
 * instant before the new one takes its place, so a miss is tried twice more, 25 ms apart.
 */
async function checkpointReadable(dir) {
  for (let attempt = 0; attempt < 3; attempt++) {
    if (attempt > 0) await new Promise((resolve) => setTimeout(resolve, 25))
    try {
      return (await fsp.stat(dir)).isDirectory()
    } catch {}
  }
  return false
}

/**
 * Builds the procvisor-backed classes over one `@mastra/core/workspace` module namespace.
 * `procvisor/mastra` calls it for you; call it yourself only to target another copy of Mastra.
 * @param {typeof import('@mastra/core/workspace')} workspace
 */
function defineMastraClasses(workspace) {
  const { ProcessHandle, SandboxProcessManager, LocalSandbox } = workspace || {}
  if (typeof ProcessHandle !== 'function' || typeof SandboxProcessManager !== 'function' || typeof LocalSandbox !== 'function') {
    throw new TypeError('procvisor/mastra: expected the @mastra/core/workspace module (ProcessHandle, SandboxProcessManager, LocalSandbox)')
  }

  /**
   * Mastra `ProcessHandle` over one procvisor process core. Output reaches Mastra's `emitStdout` /
   * `emitStderr` already decoded (a UTF-8 character split across reads arrives whole), and
   * Mastra's base class retains it, calls the listeners and feeds `reader`.
   */
  class NativeProcessHandle extends ProcessHandle {
    /** @internal Created by NativeProcessManager.spawn. */
    constructor(options) {
      const o = options || {}
      super(o) // validates maxRetainedBytes, registers spawn-time listeners, wraps wait()
      /** Exit code; `undefined` while running and until all output has been delivered. */
      this.exitCode = undefined
      this._core = undefined
      this._view = undefined
      this._stdinMode = o.stdinMode === 'ignore' ? 'ignore' : 'pipe'
      this._waitPromise = undefined
      /** @internal The sandbox lifetime (ms) whose end is killing this process, once it does. */
      this._lifetimeMs = undefined
    }

    /** The OS pid (also the process group id), in decimal. */
    get pid() {
      return this._core ? String(this._core.pid) : ''
    }

    /** procvisor's own view of the same process (waitForPort, waitForLog, logs, signals). */
    get nativeHandle() {
      if (!this._view && this._core) this._view = new CoreProcessHandle(this._core)
      return this._view
    }

    /** @internal */
    _attach(core) {
      this._core = core
      this._waitPromise = core.finish().then((exit) => this._settle(exit))
    }

    /** @internal Resolves after the last chunk reached the listeners. */
    _settle(exit) {
      // Killed by the end of the sandbox's lifetime: a timeout too, reported as Mastra reports
      // its per-command one (124, timedOut, a note on stderr), with a note that says which.
      const lifetime = !exit.timedOut && this._lifetimeMs !== undefined && exit.signal !== undefined && exit.signal !== null
      if (exit.timedOut) this.emitStderr(this._core.timeoutNote())
      else if (lifetime) this.emitStderr(`\nProcess killed: the sandbox's lifetime (timeoutMs) of ${this._lifetimeMs} ms ended`)
      this.exitCode = lifetime ? 124 : mastraExitCode(exit)
      const timedOut = exit.timedOut || lifetime
      return {
        success: this.exitCode === 0,
        exitCode: this.exitCode,
        stdout: this.stdout,
        stderr: this.stderr,
        executionTimeMs: exit.afterMs,
        // Mastra reports a timeout as killed too (its timeout is a kill).
        killed: this.exitCode === 128 || timedOut,
        timedOut,
      }
    }

    /** Resolves once the process exited and its output is drained; the same result every call. */
    async wait() {
      return this._waitPromise
    }

    /**
     * SIGKILL to the whole process group; `false` if the process had already exited. Resolves
     * without waiting for the exit. procvisor extension: a `signal` (1–64, or a name: 'SIGTERM',
     * 'TERM') sends that instead.
     */
    async kill(signal) {
      if (this.exitCode !== undefined) return false
      return this.nativeHandle.kill(signal)
    }

    /** Writes to stdin; resolves once written. Writes stay in order. */
    async sendStdin(data) {
      this._stdinCheck()
      await this.nativeHandle.sendStdin(data)
    }

    /** Sends EOF on stdin. Idempotent; rejects after exit or when stdin was ignored. */
    async closeStdin() {
      this._stdinCheck()
      await this.nativeHandle.closeStdin()
    }

    /** Sets the window size of the process's terminal (spawned with `pty`). */
    async resize(cols, rows) {
      return this.nativeHandle.resize(cols, rows)
    }

    _stdinCheck() {
      this._core.assertNotExited(this.pid)
      if (this._stdinMode === 'ignore') {
        throw new ProcessStdinUnavailableError(`Process ${this.pid} does not have stdin available`)
      }
    }
  }

  const RemoteProcessHandle = defineRemoteHandle(ProcessHandle)

  /**
   * Mastra `SandboxProcessManager` on procvisor. Mastra's base class wraps `spawn` / `list` / `get`
   * (ensureRunning, the `setEnv` overlay, abort signals, prune-on-read) and provides `kill` and
   * `release`; this class starts the processes. Works inside any `MastraSandbox`; inside a
   * `LocalSandbox` it follows the sandbox's working directory, env and isolation.
   */
  class NativeProcessManager extends SandboxProcessManager {
    /** Runs `command` with `/bin/sh -c` (or the sandbox's isolation wrapper, without a shell) in a new process group. */
    async spawn(command, options) {
      const o = options || {}
      const sandbox = this.sandbox
      const wd = sandboxDirectory(sandbox)
      const cwd = commandCwd(wd, o.cwd)
      const env =
        sandbox && typeof sandbox.buildEnv === 'function'
          ? sandbox.buildEnv(o.env)
          : { PATH: process.env.PATH, ...this.env, ...o.env }
      let argv
      if (sandbox && sandbox.isolation && sandbox.isolation !== 'none' && typeof sandbox.wrapCommandForIsolation === 'function') {
        const wrapped = sandbox.wrapCommandForIsolation(command)
        argv = [wrapped.command, ...wrapped.args]
      }

      if (sandbox && sandbox._persistent) return this._spawnRemote(command, o, { argv, cwd, env: envStrings(env) })
      const handle = new NativeProcessHandle(o) // throws RangeError for a bad maxRetainedBytes, before anything runs
      const launchOptions = {
        argv,
        cwd,
        timeout: o.timeout ? o.timeout : undefined,
        stdinMode: o.stdinMode === 'ignore' ? 'ignore' : 'pipe',
        maxRetainedBytes: 0, // Mastra's base class retains the text; procvisor keeps none
        pty: o.pty,
      }
      const listeners = listenersOf({ onStdout: (data) => handle.emitStdout(data), onStderr: (data) => handle.emitStderr(data) })
      const req = request(command, launchOptions, [envStrings(env)], wd, containment())
      handle._attach(await launch('shell', req, { command }, listeners))
      this._tracked.set(handle.pid, handle)
      return handle
    }

    /** Every tracked process, running or exited (until released or read once after exit). */
    async list() {
      if (this.sandbox && this.sandbox._persistent) {
        // Not attached (never started, stopped, detached): nothing of the sandbox is known here.
        const conn = this.sandbox._conn
        return conn ? conn.call('list') : []
      }
      return [...this._tracked.values()].map(processInfo)
    }

    /**
     * A tracked handle; in a persistent sandbox, also a process that another Node process
     * started (or this one, before a restart), with its retained output.
     */
    async get(pid) {
      const tracked = this._tracked.get(pid)
      if (tracked || !(this.sandbox && this.sandbox._persistent)) return tracked
      const conn = this.sandbox._connection()
      let handle
      try {
        await conn.call('attach', { pid: String(pid) }, (answer) => {
          // The retention the process was spawned with, so the handle keeps all the supervisor sent.
          const kept = answer.maxRetainedBytes === 'Infinity' ? Infinity : answer.maxRetainedBytes
          handle = new RemoteProcessHandle(typeof kept === 'number' ? { maxRetainedBytes: kept } : {}, conn, answer)
        })
      } catch (e) {
        if (e instanceof ProcessNotFoundError) return undefined
        throw e
      }
      this._tracked.set(handle.pid, handle)
      return handle
    }

    /**
     * Mastra's kill (the process killed, waited for and released); procvisor extension: a
     * `signal` (a number or a name) is sent instead of SIGKILL, and the exit is still waited for.
     */
    async kill(pid, signal) {
      if (signal === undefined) return super.kill(pid)
      binding.checkSignal(signal)
      const handle = await this.get(pid)
      if (!handle) return false
      const killed = await handle.kill(signal)
      if (killed) await handle.wait().catch(() => {})
      this.release(handle.pid)
      return killed
    }

    /** Mastra's release; a persistent sandbox's supervisor forgets the process too once it exited. */
    release(pid) {
      super.release(pid)
      const conn = this.sandbox && this.sandbox._persistent ? this.sandbox._conn : undefined
      if (conn && !conn.lostError) conn.call('release', { pid: String(pid) }).catch(() => {})
    }

    /** @internal A spawn in a persistent sandbox: the supervisor starts it, this process watches. */
    async _spawnRemote(command, o, spec) {
      const conn = this.sandbox._connection()
      const retained = o.maxRetainedBytes === Infinity ? 'Infinity' : o.maxRetainedBytes
      let handle
      // Resolved here, against this Node process's directory: the supervisor's is another.
      const args = { command, ...spec, cwd: path.resolve(spec.cwd), timeout: o.timeout ? o.timeout : undefined, stdinMode: o.stdinMode, pty: o.pty, maxRetainedBytes: retained }
      await conn.call('spawn', args, (answer) => {
        handle = new RemoteProcessHandle(o, conn, answer)
      })
      this._tracked.set(handle.pid, handle)
      return handle
    }
  }

  /**
   * Mastra's `LocalSandbox` with `NativeProcessManager` as `processes`. Takes every
   * `LocalSandboxOptions`; `executeCommand`, `stop()`, `destroy()`, the workspace tools and the
   * LSP client all run through procvisor.
   */
  class NativeLocalSandbox extends LocalSandbox {
    constructor(options) {
      const o = options || {}
      // Before anything is built: a bad value is a typed error, not a sandbox that half works.
      const lifecycle = binding.checkLifecycleOptions(o)
      // Absolute from here on, against Node's working directory now: every later use (commands,
      // checkpoints, the running-sandbox key) reads the same directory whatever the cwd becomes.
      const workingDirectory = absoluteDirectory('workingDirectory', o.workingDirectory)
      const checkpointsDirectory = absoluteCheckpoints(o.checkpointsDirectory)
      // Mastra's constructor wires a LocalProcessManager that is replaced below and never used.
      super({ ...o, workingDirectory, ...(checkpointsDirectory !== undefined && { checkpointsDirectory }) })
      if (lifecycle.persistent) checkId(this.id)
      // A capture would copy itself into itself: refused now rather than at the first stop.
      binding.checkCheckpointsDirectory(this.workingDirectory, this._checkpointsDirectory)
      const pm = new NativeProcessManager({ env: o.env ?? {} })
      pm.sandbox = this
      this.processes = pm
      /** @internal The constructor options, for clone() when Mastra's own fields are absent. */
      this._procvisorOptions = o
      this._timeoutMs = lifecycle.timeoutMs ?? undefined
      this._snapshotOnStop = lifecycle.snapshotOnStop
      this._explicitCheckpointName = o.checkpointName
      // Mastra's restore on start and snapshot() read this field: with a name they restore and capture.
      if (this._snapshotOnStop && this._checkpointName === undefined) this._checkpointName = checkpointNameFor(this.id)
      this._running = undefined
      this._lastCheckpoint = undefined
      this._persistent = lifecycle.persistent
      /** @internal The connection to a persistent sandbox's supervisor while attached. */
      this._conn = undefined
    }

    /** Mastra's `setWorkingDirectory`, keeping the directory absolute (resolved against Node's cwd now). */
    setWorkingDirectory(dir) {
      super.setWorkingDirectory(typeof dir === 'string' ? absoluteDirectory('workingDirectory', dir) : dir)
    }

    /** Whether the processes run under a supervisor of their own and outlive this Node process. */
    get persistent() {
      return this._persistent
    }

    /** The pid of a persistent sandbox's supervisor while this object is attached to it. */
    get supervisorPid() {
      return this._conn && !this._conn.lostError ? this._conn.sandbox.pid : undefined
    }

    /** The maximum lifetime from `start()` in milliseconds, if there is one. */
    get timeoutMs() {
      return this._timeoutMs
    }

    /** Whether `stop()` captures the working directory as this sandbox's checkpoint. */
    get snapshotOnStop() {
      return this._snapshotOnStop
    }

    /** The checkpoint this sandbox restores from and captures to: `checkpointName`, or one made from `id`. */
    get checkpointName() {
      return this._checkpointName
    }

    /** When the running sandbox's lifetime ends; `undefined` when it is not running or has no lifetime. */
    get expiresAt() {
      const at = this._persistent ? this._conn?.sandbox?.expiresAt : this._running?.expiresAt
      return at === undefined ? undefined : new Date(at)
    }

    /** What the last capture or restore of this object did (counts, bytes, skipped entries). */
    get lastCheckpoint() {
      return this._lastCheckpoint
    }

    /**
     * Mastra's acquisition, with one more case: another object with this id and working directory
     * is running in this Node process, and this one joins it (outcome `'connected'`).
     */
    async find(options) {
      if (this._persistent) return this._findSupervisor()
      this._leaveRunning()
      const key = `${this.id}\0${this.workingDirectory}`
      const found = runningSandboxes.get(key)
      if (found && !found.ended) return found
      // Registered before the first await, so a sandbox started meanwhile joins this one.
      const running = new RunningSandbox(key, this._timeoutMs, this.processes._tracked, this.processes._dismissed)
      runningSandboxes.set(key, running)
      this._joinRunning(running)
      return this._leavingOnError(() => super.find(options))
    }

    async connect(handle, options) {
      if (handle instanceof Connection) {
        this._attach(handle)
        return super.connect(this.workingDirectory, options)
      }
      if (handle instanceof RunningSandbox) {
        this._joinRunning(handle)
        return this._leavingOnError(() => super.connect(this.workingDirectory, options))
      }
      return this._leavingOnError(() => super.connect(handle, options))
    }

    async create(options) {
      if (this._persistent) {
        await super.create(options)
        return this._attach(await startSupervisor(this._supervisorConfig()))
      }
      return this._leavingOnError(() => super.create(options))
    }

    /**
     * Mastra's start; a persistent sandbox whose supervisor was lost, or that was detached,
     * attaches again (or starts a new supervisor) rather than report itself still running.
     */
    async _start(options) {
      if (this._persistent && this.status === 'running' && (!this._conn || this._conn.lostError)) this.status = 'stopped'
      return super._start(options)
    }

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

    /**
     * Mastra's stop (every process killed, mounts unmounted), then, with `snapshotOnStop`, the
     * working directory captured: after the kill, so no process is writing while it is copied.
     * Objects that joined the same running sandbox are stopped with it.
     */
    async stop() {
      if (this._persistent) {
        await this._endSupervisor()
        await super.stop()
        if (this._snapshotOnStop) await this.snapshot()
        return
      }
      const { running, ending } = this._leaveRunning({ end: true })
      if (running?.expired) {
        // Marked just before Mastra's stop kills them, and only those still running then: an
        // earlier end is the process's own.
        for (const handle of running.tracked.values()) {
          if (handle instanceof NativeProcessHandle && handle._core && handle._core.exitCode() === undefined) handle._lifetimeMs = running.timeoutMs
        }
      }
      await super.stop()
      const name = this._checkpointName
      if (this._snapshotOnStop && !running?.destroying && !running?.captured.has(name)) {
        running?.captured.add(name)
        await this.snapshot()
      }
      if (ending) await this._stopJoined(running)
    }

    /**
     * Mastra's destroy, which stops the joined objects too, and then deletes the checkpoints this
     * sandbox (this id) captured. A checkpoint it did not capture, or that another sandbox has
     * captured over since, is left alone.
     */
    async destroy() {
      if (this._persistent) {
        await this._endSupervisor()
        await super.destroy()
        return this._removeOwnCheckpoints()
      }
      const { running, ending } = this._leaveRunning({ end: true })
      if (running) running.destroying = true
      await super.destroy()
      if (ending) await this._stopJoined(running)
      await this._removeOwnCheckpoints()
    }

    /** Mastra's `_destroy`; a sandbox never started here still deletes the checkpoints its id captured. */
    async _destroy() {
      if (this.status === 'pending') await this._removeOwnCheckpoints()
      return super._destroy()
    }

    /** Mastra's `getInfo()`, with the end of the lifetime (`timeoutAt`, `metadata.expiresAt`). */
    async getInfo() {
      const info = await super.getInfo()
      const at = this.expiresAt
      if (!at) return info
      return { ...info, timeoutAt: at, metadata: { ...info.metadata, expiresAt: at.toISOString() } }
    }

    /**
     * Mastra's `snapshot()`: captures the working directory as the configured checkpoint, one
     * capture at a time; no-op without a checkpoint name. The copy runs in procvisor's native copier.
     */
    async snapshot() {
      if (!this._checkpointName) return
      const run = (this._snapshotChain ?? Promise.resolve()).then(() => this._captureCheckpoint(this._checkpointName))
      this._snapshotChain = run.catch(() => {})
      return run
    }

    /** @internal Mastra's capture protocol (temporary sibling, then renames), done natively. */
    async _captureCheckpoint(name) {
      binding.checkCheckpointName(name)
      const report = await binding.captureCheckpoint(this.workingDirectory, this._checkpointsDirectory, name, this.id)
      this._noteCheckpoint('capture', name, report)
    }

    /** @internal Mastra's restore of an empty or missing working directory on start, done natively. */
    async _seedFromCheckpoint() {
      const names = [this._checkpointName, this._seedCheckpointName].filter((name) => name !== undefined)
      if (names.length === 0) return
      if ((await fsp.readdir(this.workingDirectory).catch(() => [])).length > 0) return
      for (const name of names) {
        binding.checkCheckpointName(name)
        const dir = path.join(this._checkpointsDirectory, name)
        if (!(await checkpointReadable(dir))) continue
        let report
        try {
          report = await binding.restoreCheckpoint(dir, this.workingDirectory)
        } catch (error) {
          // Renamed away mid-restore by a capture swapping in a newer one: the failed restore
          // left the directory empty, so the newer one is restored instead.
          if (!(error instanceof SandboxSnapshotError) || error.osCode !== 'ENOENT') throw error
          if (!(await checkpointReadable(dir))) continue
          report = await binding.restoreCheckpoint(dir, this.workingDirectory)
        }
        this._noteCheckpoint('restore', name, report)
        return
      }
    }

    /** @internal */
    _noteCheckpoint(operation, name, report) {
      this._lastCheckpoint = { operation, name, ...report }
      if (report.skipped.length > 0) {
        this.logger.warn('Checkpoint skipped entries that hold no data to copy', { checkpointName: name, operation, skipped: report.skipped })
      }
      this.logger.debug(operation === 'capture' ? 'Captured checkpoint' : 'Restored working directory from checkpoint', {
        checkpointName: name,
        files: report.files,
        bytes: report.bytes,
        durationMs: report.durationMs,
      })
    }

    /** @internal */
    async _removeOwnCheckpoints() {
      const removed = await binding.removeOwnedCheckpoints(this._checkpointsDirectory, this.id)
      if (removed.length > 0) this.logger.debug('Deleted checkpoints', { checkpointNames: removed })
    }

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

    /**
     * Mastra's built-in executeCommand, verbatim, over `this.processes`: args shell-quoted,
     * stdin ignored, all output retained unless `maxRetainedBytes` is given, the handle released
     * afterwards, `command` set to the full command line.
     */
    async executeCommand(command, args, opts) {
      const fullCommand = args?.length ? `${command} ${args.map((a) => shellQuote(a)).join(' ')}` : command
      this.logger.debug('Executing command', { sandbox: this.name, command: fullCommand, cwd: opts?.cwd })
      const pm = this.processes
      const handle = await pm.spawn(fullCommand, {
        ...opts,
        ...(args?.length ? { originalInvocation: { command, args: [...args] } } : {}),
        maxRetainedBytes: opts?.maxRetainedBytes ?? Infinity,
        stdinMode: 'ignore',
      })
      try {
        const result = await handle.wait()
        this.logger.debug('Command completed', { sandbox: this.name, exitCode: result.exitCode, duration: result.executionTimeMs })
        return { ...result, command: fullCommand }
      } finally {
        pm.release(handle.pid)
      }
    }

    /**
     * LocalSandbox.clone(), returning a NativeLocalSandbox: the same fields as Mastra's
     * (working directory, env, isolation, native sandbox config, instructions, checkpoints);
     * `sandboxId` and `idleTimeoutMinutes` are ignored, hooks and Mastra's `timeout` are not carried
     * over; `timeoutMs` and `snapshotOnStop` are, and a clone with another id captures under its own name.
     */
    clone(options) {
      const c = options || {}
      const o = this._procvisorOptions
      const nativeSandbox = this._nativeSandboxConfig ?? o.nativeSandbox ?? {}
      const readWritePaths = this._initialReadWritePaths ?? o.nativeSandbox?.readWritePaths ?? []
      const instructions = '_instructionsOverride' in this ? this._instructionsOverride : o.instructions
      // The configured name only: a clone with another id makes its own from that id.
      const checkpointName = c.checkpointName ?? this._explicitCheckpointName
      const seedCheckpointName = c.seedCheckpointName ?? ('_seedCheckpointName' in this ? this._seedCheckpointName : o.seedCheckpointName)
      const checkpointsDirectory =
        this._checkpointsDirectory ?? o.checkpointsDirectory ?? path.join(path.dirname(this.workingDirectory), '.checkpoints')
      return new NativeLocalSandbox({
        ...(c.id !== undefined && { id: c.id }),
        workingDirectory: c.workingDirectory ?? this.workingDirectory,
        env: c.env ?? this.env ?? o.env,
        isolation: this.isolation,
        nativeSandbox: {
          ...nativeSandbox,
          readWritePaths: [...readWritePaths],
          readOnlyPaths: [...(nativeSandbox.readOnlyPaths ?? [])],
        },
        ...(instructions !== undefined && { instructions }),
        ...(checkpointName !== undefined && { checkpointName }),
        ...(seedCheckpointName !== undefined && { seedCheckpointName }),
        checkpointsDirectory,
        ...(this._timeoutMs !== undefined && { timeoutMs: this._timeoutMs }),
        ...(this._snapshotOnStop && { snapshotOnStop: true }),
        ...(this._persistent && { persistent: true }),
      })
    }
  }

  traceMethods(NativeProcessHandle, ['wait', 'kill', 'sendStdin', 'closeStdin', 'resize'])
  traceMethods(NativeProcessManager, ['spawn', 'list', 'get', 'kill'])
  traceMethods(NativeLocalSandbox, ['_start', 'stop', 'destroy', 'snapshot', 'executeCommand', 'getInfo'])

  return { NativeProcessHandle, NativeProcessManager, NativeLocalSandbox, LocalSandbox: NativeLocalSandbox }
}

// ---- CommonJS entry: the CommonJS build of @mastra/core/workspace, loaded on first use ----------

/** The error of an application without a usable @mastra/core (the other errors pass as they are). */
function mastraMissing(err) {
  if (err && (err.code === 'MODULE_NOT_FOUND' || err.code === 'ERR_MODULE_NOT_FOUND' || err.code === 'ERR_PACKAGE_PATH_NOT_EXPORTED')) {
    return new Error(`procvisor/mastra needs @mastra/core (>= 1.71.0) installed in the application: npm install @mastra/core (${err.message})`, { cause: err })
  }
  return err
}

let classes
function load() {
  if (!classes) {
    let workspace
    try {
      workspace = requireFromApplication('@mastra/core/workspace')
    } catch (err) {
      throw mastraMissing(err)
    }
    classes = defineMastraClasses(workspace)
  }
  return classes
}

module.exports = {
  defineMastraClasses,
  mastraMissing,
  shellQuote,
  SandboxSupervisorLostError,
  SandboxProtocolError,
  SandboxAccessError,
  SandboxSnapshotError,
  get NativeProcessHandle() {
    return load().NativeProcessHandle
  },
  get NativeProcessManager() {
    return load().NativeProcessManager
  },
  get NativeLocalSandbox() {
    return load().NativeLocalSandbox
  },
  get LocalSandbox() {
    return load().LocalSandbox
  },
}
