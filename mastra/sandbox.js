'use strict'
// NativeLocalSandbox: Mastra's LocalSandbox with NativeProcessManager as `processes`, a runtime
// that holds it running (runtime/: in this Node process with a lifetime, or a persistent
// sandbox's supervisor) and native checkpoints (checkpoints.js).

const path = require('node:path')
const crypto = require('node:crypto')
const { checkId, MAX_ID_LENGTH } = require('../lib/persistent/wire/location.js')
const { invalidOption } = require('../lib/native/errors.js')
const { binding } = require('../lib/native/native.js')
const { absoluteDirectory, absoluteCheckpoints } = require('../lib/mastra/paths.js')
const { traceMethods } = require('../lib/native/trace.js')
const { shellQuote } = require('../lib/process/mastra-rules.js')
const { checkpointNameFor, Checkpointing, SandboxCheckpoints } = require('./checkpoints.js')
const { runtimeOf } = require('./runtime/index.js')
const { SandboxTerminals } = require('./terminals.js')
const { sandboxLogFiles } = require('../lib/persistent/wire/log-files.js')


/** The id of a persistent sandbox's clone made without one: `<id>-<8 hex>`, within the 128 characters. */
function derivedId(id) {
  const suffix = `-${crypto.randomBytes(4).toString('hex')}`
  return `${[...String(id)].slice(0, MAX_ID_LENGTH - suffix.length).join('')}${suffix}`
}

/** Builds NativeLocalSandbox over Mastra's `LocalSandbox` and NativeProcessManager. */
function defineNativeLocalSandbox(LocalSandbox, { NativeProcessManager }) {
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
      // Checked, and made, before anything is built; relative to the sandbox's working directory.
      // A persistent sandbox's (on by default) once its id is known, below.
      // `false`: none, not even a persistent sandbox's default (its output stays in memory, 1 MiB).
      const logFiles =
        lifecycle.persistent || o.logDirectory === false ? null : binding.resolveLogFiles({ workingDirectory, logDirectory: o.logDirectory, logMaxBytes: o.logMaxBytes, logKeep: o.logKeep })
      // Mastra's constructor wires a LocalProcessManager that is replaced below and never used.
      super({ ...o, workingDirectory, ...(checkpointsDirectory !== undefined && { checkpointsDirectory }) })
      if (lifecycle.persistent) checkId(this.id)
      // A capture would copy itself into itself: refused now rather than at the first stop.
      binding.checkCheckpointsDirectory(this.workingDirectory, this._checkpointsDirectory)
      const pm = new NativeProcessManager({ env: o.env ?? {} })
      pm.sandbox = this
      this.processes = pm
      /** Programs on terminals of their own, started and ended with the sandbox (terminals.js). */
      this.terminals = new SandboxTerminals(this)
      /** @internal Its captures and restores, one at a time, in the directory Mastra's constructor fixed. */
      this._checkpointing = new Checkpointing(this, this._checkpointsDirectory)
      /** Named checkpoints of the working directory, captured incrementally and restored in place. */
      this.checkpoints = new SandboxCheckpoints(this._checkpointing)
      /** @internal Where its processes' logs are also written (`logDirectory`), resolved, or null. */
      this._logFiles = lifecycle.persistent ? sandboxLogFiles(o, this.workingDirectory, this.id) : logFiles
      /** @internal Whether `logDirectory` was given: a clone of a persistent one gets its own default. */
      this._logDirectoryAsked = o.logDirectory !== undefined
      /** @internal The constructor options, for clone() when Mastra's own fields are absent. */
      this._procvisorOptions = o
      this._timeoutMs = lifecycle.timeoutMs ?? undefined
      this._snapshotOnStop = lifecycle.snapshotOnStop
      this._explicitCheckpointName = o.checkpointName
      // Mastra's restore on start and snapshot() read this field: with a name they restore and capture.
      if (this._snapshotOnStop && this._checkpointName === undefined) this._checkpointName = checkpointNameFor(this.id)
      this._persistent = lifecycle.persistent
      /** @internal What holds it running, and where its processes run: the one choice of mode. */
      this._runtime = runtimeOf(this, { persistent: this._persistent, logFiles: this._logFiles, checkpointsDirectory: this._checkpointsDirectory })
    }

    /** @internal The process backend its processes and terminals run on. */
    get _backend() {
      return this._runtime.backend
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
      return this._persistent ? this._runtime.pid : undefined
    }

    /**
     * How this object reached its persistent sandbox's supervisor while attached: `'started'`
     * (its start() started it) or `'joined'` (one was serving). Beside `start()`'s result rather
     * than in it, which stays Mastra's `{ outcome }`.
     */
    get supervisor() {
      return this._persistent ? this._runtime.supervisor : undefined
    }

    /**
     * Lets go of a persistent sandbox without stopping it: its processes run on until its
     * lifetime ends, and a later `start()` (here or in another Node process) attaches again.
     */
    async detach() {
      if (!this._persistent) throw invalidOption('detach() is for persistent sandboxes (persistent: true); stop() ends this one')
      this._runtime.detach()
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
      const at = this._runtime.expiresAt
      // A persistent sandbox's supervisor says null for no lifetime.
      return at === undefined || at === null ? undefined : new Date(at)
    }

    /** What the last capture or restore of this object did (counts, bytes, skipped entries). */
    get lastCheckpoint() {
      return this._checkpointing.last
    }

    /**
     * Mastra's own steps of a sandbox's lifecycle, which the runtime runs around its own: an
     * arrow keeps `super` bound to this class's base, Mastra's `LocalSandbox`.
     * @internal
     */
    _mastraSteps() {
      return {
        find: (options) => super.find(options),
        connect: (handle, options) => super.connect(handle, options),
        create: (options) => super.create(options),
        start: (options) => super._start(options),
        stop: () => super.stop(),
        destroy: () => super.destroy(),
      }
    }

    /**
     * Mastra's acquisition, with one more case: another object with this id and working directory
     * is running (in this Node process, or as a persistent sandbox's supervisor), and this one
     * joins it (outcome `'connected'`).
     */
    async find(options) {
      return this._runtime.acquire('find', this._mastraSteps(), options)
    }

    async connect(handle, options) {
      return this._runtime.acquire('connect', this._mastraSteps(), handle, options)
    }

    async create(options) {
      return this._runtime.acquire('create', this._mastraSteps(), options)
    }

    /**
     * Mastra's start; a persistent sandbox whose supervisor was lost, or that was detached,
     * attaches again (or starts a new supervisor) rather than report itself still running.
     */
    async _start(options) {
      return this._runtime.acquire('start', this._mastraSteps(), options)
    }

    /**
     * Mastra's stop (every process killed, mounts unmounted), then, with `snapshotOnStop`, the
     * working directory captured: after the kill, so no process is writing while it is copied.
     * Objects that joined the same running sandbox are stopped with it.
     */
    async stop() {
      return this._end({ destroy: false })
    }

    /**
     * Mastra's destroy, which stops the joined objects too, and then deletes the checkpoints this
     * sandbox (this id) captured. A checkpoint it did not capture, or that another sandbox has
     * captured over since, is left alone.
     */
    async destroy() {
      return this._end({ destroy: true })
    }

    /**
     * @internal stop() and destroy(), in either runtime. Spawns in flight are settled first, so
     * that Mastra's stop, which kills what is tracked, finds every process they start; a stack
     * goes down next, each process through its own shutdown. The working directory is captured
     * once per end, after the kill, so no process is writing while it is copied, and not at all
     * by a destroy, which deletes this id's checkpoints instead.
     */
    async _end({ destroy }) {
      const mastra = this._mastraSteps()
      const ending = this._runtime.end({ destroy })
      await this.processes._launches.settled()
      await this.processes._stackDown()
      await ending.release()
      await (destroy ? mastra.destroy() : mastra.stop())
      const name = this._checkpointName
      const shared = ending.shared
      if (!destroy && this._snapshotOnStop && !shared.destroying && !shared.captured.has(name)) {
        shared.captured.add(name)
        await this.snapshot()
      }
      await ending.others()
      if (destroy) await this._checkpointing.removeOwn()
    }

    /** Mastra's `_destroy`; a sandbox never started here still deletes the checkpoints its id captured. */
    async _destroy() {
      if (this.status === 'pending') await this._checkpointing.removeOwn()
      return super._destroy()
    }

    /**
     * Mastra's `snapshot()`: captures the working directory as the configured checkpoint, one
     * capture at a time; no-op without a checkpoint name. The copy runs in procvisor's native copier.
     */
    async snapshot() {
      const name = this._checkpointName
      if (!name) return
      const checkpointing = this._checkpointing
      await checkpointing.turn(() => checkpointing.capture(name))
    }

    /** @internal Mastra's capture, done natively; the files unchanged since the last capture are shared with it. */
    _captureCheckpoint(name) {
      return this._checkpointing.capture(name)
    }

    /** @internal Mastra's restore of an empty or missing working directory on start, done natively. */
    _seedFromCheckpoint() {
      return this._checkpointing.restoreOnStart([this._checkpointName, this._seedCheckpointName])
    }

    /** Mastra's `getInfo()`, with the end of the lifetime (`timeoutAt`, `metadata.expiresAt`). */
    async getInfo() {
      const info = await super.getInfo()
      const at = this.expiresAt
      if (!at) return info
      return { ...info, timeoutAt: at, metadata: { ...info.metadata, expiresAt: at.toISOString() } }
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
      // Mastra's clone gets an id of its own; a persistent one gets one derived from this id, so
      // that its supervisor's id says where it came from (read it from `clone.id`).
      const id = c.id ?? (this._persistent ? derivedId(this.id) : undefined)
      return new NativeLocalSandbox({
        ...(id !== undefined && { id }),
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
        ...(this._procvisorOptions.logDirectory === false && { logDirectory: false }),
        ...(this._logFiles && {
          ...((this._logDirectoryAsked || !this._persistent) && { logDirectory: this._logFiles.directory }),
          logMaxBytes: this._logFiles.maxBytes,
          logKeep: this._logFiles.keep,
        }),
        ...(this._timeoutMs !== undefined && { timeoutMs: this._timeoutMs }),
        ...(this._snapshotOnStop && { snapshotOnStop: true }),
        ...(this._persistent && { persistent: true }),
      })
    }
  }

  traceMethods(NativeLocalSandbox, ['_start', 'stop', 'destroy', 'snapshot', 'executeCommand', 'getInfo'])
  return NativeLocalSandbox
}

module.exports = { defineNativeLocalSandbox }
