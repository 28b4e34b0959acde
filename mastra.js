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
const { ProcessStdinUnavailableError } = require('./lib/errors.js')
const { binding } = require('./lib/native.js')

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
      this._waitPromise = core.finish().then((st) => this._settle(st))
    }

    /** @internal Resolves after the last chunk reached the listeners. */
    _settle(st) {
      const exit = st.finishedExit
      if (exit.timedOut) this.emitStderr(this._core.timeoutNote())
      this.exitCode = mastraExitCode(exit)
      return {
        success: this.exitCode === 0,
        exitCode: this.exitCode,
        stdout: this.stdout,
        stderr: this.stderr,
        executionTimeMs: st.finishedAfterMs,
        // Mastra reports a timeout as killed too (its timeout is a kill).
        killed: this.exitCode === 128 || exit.timedOut,
        timedOut: exit.timedOut,
      }
    }

    /** Resolves once the process exited and its output is drained; the same result every call. */
    async wait() {
      return this._waitPromise
    }

    /**
     * SIGKILL to the whole process group; `false` if the process had already exited. Resolves
     * without waiting for the exit. procvisor extension: a numeric signal (1–64) sends that instead.
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

    _stdinCheck() {
      this._core.assertNotExited(this.pid)
      if (this._stdinMode === 'ignore') {
        throw new ProcessStdinUnavailableError(`Process ${this.pid} does not have stdin available`)
      }
    }
  }

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
      const wd = sandbox && typeof sandbox.workingDirectory === 'string' ? sandbox.workingDirectory : process.cwd()
      let cwd = wd
      if (o.cwd) {
        if (path.isAbsolute(o.cwd)) cwd = o.cwd
        else {
          // LocalProcessManager's rule: a relative path already inside the working directory is kept.
          const nw = path.resolve(wd)
          const nc = path.resolve(o.cwd)
          cwd = nc === nw || nc.startsWith(`${nw}${path.sep}`) ? nc : path.resolve(wd, o.cwd)
        }
      }
      const env =
        sandbox && typeof sandbox.buildEnv === 'function'
          ? sandbox.buildEnv(o.env)
          : { PATH: process.env.PATH, ...this.env, ...o.env }
      let argv
      if (sandbox && sandbox.isolation && sandbox.isolation !== 'none' && typeof sandbox.wrapCommandForIsolation === 'function') {
        const wrapped = sandbox.wrapCommandForIsolation(command)
        argv = [wrapped.command, ...wrapped.args]
      }

      const handle = new NativeProcessHandle(o) // throws RangeError for a bad maxRetainedBytes, before anything runs
      const launchOptions = {
        argv,
        cwd,
        timeout: o.timeout ? o.timeout : undefined,
        stdinMode: o.stdinMode === 'ignore' ? 'ignore' : 'pipe',
        maxRetainedBytes: 0, // Mastra's base class retains the text; procvisor keeps none
      }
      const listeners = listenersOf({ onStdout: (data) => handle.emitStdout(data), onStderr: (data) => handle.emitStderr(data) })
      const req = request(command, launchOptions, [envStrings(env)], path.resolve(wd), containment())
      handle._attach(await launch('shell', req, { command }, listeners))
      this._tracked.set(handle.pid, handle)
      return handle
    }

    /** Every tracked process, running or exited (until released or read once after exit). */
    async list() {
      return [...this._tracked.values()].map(processInfo)
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
      super(o) // wires a LocalProcessManager that is replaced below and never used
      const pm = new NativeProcessManager({ env: o.env ?? {} })
      pm.sandbox = this
      this.processes = pm
      /** @internal The constructor options, for clone() when Mastra's own fields are absent. */
      this._procvisorOptions = o
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
     * `sandboxId` and `idleTimeoutMinutes` are ignored, hooks and timeout are not carried over.
     */
    clone(options) {
      const c = options || {}
      const o = this._procvisorOptions
      const nativeSandbox = this._nativeSandboxConfig ?? o.nativeSandbox ?? {}
      const readWritePaths = this._initialReadWritePaths ?? o.nativeSandbox?.readWritePaths ?? []
      const instructions = '_instructionsOverride' in this ? this._instructionsOverride : o.instructions
      const checkpointName = c.checkpointName ?? ('_checkpointName' in this ? this._checkpointName : o.checkpointName)
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
      })
    }
  }

  return { NativeProcessHandle, NativeProcessManager, NativeLocalSandbox, LocalSandbox: NativeLocalSandbox }
}

// ---- CommonJS entry: the CommonJS build of @mastra/core/workspace, loaded on first use ----------

let classes
function load() {
  if (!classes) {
    let workspace
    try {
      workspace = require('@mastra/core/workspace')
    } catch (err) {
      if (err && (err.code === 'MODULE_NOT_FOUND' || err.code === 'ERR_MODULE_NOT_FOUND' || err.code === 'ERR_PACKAGE_PATH_NOT_EXPORTED')) {
        throw new Error('procvisor/mastra needs @mastra/core (>= 1.71.0) installed next to procvisor: npm install @mastra/core', { cause: err })
      }
      throw err
    }
    classes = defineMastraClasses(workspace)
  }
  return classes
}

module.exports = {
  defineMastraClasses,
  shellQuote,
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
