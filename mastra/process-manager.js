'use strict'
// NativeProcessManager: Mastra's SandboxProcessManager on procvisor. It works out what a spawn
// runs (command line, working directory, environment, isolation) and tracks the handles; a
// backend runs the processes: this Node process (backends/local.js) or, in a persistent
// sandbox, its supervisor (backends/remote.js).

const { pruneExited } = require('../lib/process/mastra-rules.js')
const { binding } = require('../lib/native/native.js')
const { ProcessManager } = require('../lib/faces/manager.js')
const { sandboxDirectory, commandCwd } = require('../lib/mastra/paths.js')
const { traceMethods } = require('../lib/native/trace.js')
const { local } = require('./backends/index.js')
const { Launches } = require('../lib/process/launches.js')

/** Env values as the child sees them (Node's rule: `undefined` drops the name, others become strings). */
function envStrings(env) {
  const out = {}
  for (const [k, v] of Object.entries(env || {})) out[k] = v === undefined ? undefined : String(v)
  return out
}

/** Builds NativeProcessManager over Mastra's `SandboxProcessManager` and NativeProcessHandle. */
function defineNativeProcessManager(SandboxProcessManager, { NativeProcessHandle }) {
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
      const workingDirectory = sandboxDirectory(sandbox)
      const cwd = commandCwd(workingDirectory, o.cwd)
      const env =
        sandbox && typeof sandbox.buildEnv === 'function'
          ? sandbox.buildEnv(o.env)
          : { PATH: process.env.PATH, ...this.env, ...o.env }
      let argv
      if (sandbox && sandbox.isolation && sandbox.isolation !== 'none' && typeof sandbox.wrapCommandForIsolation === 'function') {
        const wrapped = sandbox.wrapCommandForIsolation(command)
        argv = [wrapped.command, ...wrapped.args]
      }
      const handle = this._newHandle(o) // throws RangeError for a bad maxRetainedBytes, before anything runs
      // In flight until tracked: a sandbox's stop() waits for it, so that Mastra's stop, which
      // kills what is tracked, finds the process it starts.
      await this._launches.track(this._backend().spawn(this, handle, command, { argv, cwd, env: envStrings(env), workingDirectory, options: o }))
      return this._track(handle)
    }

    /** @internal Spawns still launching: a stop waits until each one is tracked, or failed. */
    get _launches() {
      this.__launches ??= new Launches()
      return this.__launches
    }

    /**
     * @internal A stack brought up through this object goes down before its sandbox stops: in the
     * reverse of its start order, each process through its own shutdown.
     */
    async _stackDown() {
      if (!this._stack) return
      // Mastra's wrapped get() would wait for the sandbox to be running, and it is stopping.
      const target = {
        find: async (name) => {
          const view = (await this._peek(name).catch(() => undefined))?.nativeHandle
          return view && (await view.status()).state !== 'exited' ? view : null
        },
      }
      await require('../lib/stack/up.js').down(target, this._stack).catch(() => {})
    }

    /**
     * Every tracked process, running or exited (until released or read once after exit); in a
     * persistent sandbox, every process of its supervisor.
     */
    async list() {
      return this._backend().list(this)
    }

    /**
     * A tracked handle, by pid or by the name it was spawned with; in a persistent sandbox, also
     * a process that another Node process started (or this one, before a restart), with its
     * retained output.
     */
    async get(pid) {
      return this._backend().get(this, pid)
    }

    /**
     * @internal The handle of `pid` (or a name) as `get()` finds it, without Mastra's rules around
     * it: no wait for the sandbox to run, and an exited process is not forgotten for being read
     * (the web view and a stack going down look without taking it away from the program).
     */
    async _peek(pid) {
      return this._backend().get(this, pid)
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
      this._backend().release(this, pid)
    }

    /**
     * @internal The in-process backend this object's processes run on when they run here: the
     * running sandbox's (shared by its objects, ended with it), or, in a sandbox that is not a
     * NativeLocalSandbox, one of this object's own. `create: false`: null rather than made.
     */
    _inProcess({ create = true } = {}) {
      const runtime = this.sandbox?._runtime
      if (runtime) return runtime.processManager({ create })
      if (create) this.__inProcess ??= new ProcessManager({ workingDirectory: '/', containment: 'auto' })
      return this.__inProcess ?? null
    }

    /** @internal Where the processes run: the sandbox's supervisor when it is persistent, else here. */
    _backend() {
      return this.sandbox?._backend ?? local
    }

    /** @internal Its tables of processes (tracked, dismissed, by name), which a runtime shares among the objects of one sandbox. */
    _tables() {
      return { tracked: this._tracked, dismissed: this._dismissed }
    }

    /** @internal Spawns and lookups use these tables from now on; a table not given stays. */
    _useTables({ tracked, dismissed }) {
      if (tracked) this._tracked = tracked
      if (dismissed) this._dismissed = dismissed
    }

    /** @internal What lib/stack/ brings up and down in this sandbox. */
    _stackTarget() {
      return require('../lib/stack/targets.js').sandboxTarget(this)
    }

    /** @internal A handle not yet attached to a process. */
    _newHandle(options) {
      return new NativeProcessHandle(options)
    }

    /** @internal Tracks a handle; at each exit, the oldest exited ones beyond the limit go. */
    _track(handle) {
      const tracked = this._tracked
      tracked.set(handle.pid, handle)
      const prune = () => pruneExited(tracked.values(), (h) => h.exitCode !== undefined, (h) => tracked.delete(h.pid), tracked.size)
      handle._waitPromise.then(prune, () => {})
      return handle
    }
  }

  // up(config) / down(config?): a stack of named processes (lib/stack/).
  const { StackMethods } = require('../lib/stack/targets.js')
  for (const key of Object.keys(StackMethods)) Object.defineProperty(NativeProcessManager.prototype, key, { value: StackMethods[key], writable: true, configurable: true })
  traceMethods(NativeProcessManager, ['spawn', 'list', 'get', 'kill', 'up', 'down'])
  return NativeProcessManager
}

module.exports = { defineNativeProcessManager }
