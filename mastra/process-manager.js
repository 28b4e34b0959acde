'use strict'
// NativeProcessManager: Mastra's SandboxProcessManager, starting processes with procvisor (or, in
// a persistent sandbox, through its supervisor).

const path = require('node:path')
const { processInfo, pruneExited } = require('../lib/mastra-rules.js')
const { launch, listenersOf } = require('../lib/core.js')
const { request } = require('../lib/manager.js')
const { ProcessNotFoundError } = require('../lib/errors.js')
const { binding } = require('../lib/native.js')
const { sandboxDirectory, commandCwd } = require('../lib/paths.js')
const { traceMethods } = require('../lib/trace.js')

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

/** Builds NativeProcessManager over Mastra's `SandboxProcessManager` and the two handle classes. */
function defineNativeProcessManager(SandboxProcessManager, { NativeProcessHandle, RemoteProcessHandle }) {
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
      return this._track(handle)
    }

    /** Every tracked process, running or exited (until released or read once after exit). */
    async list() {
      if (this.sandbox && this.sandbox._persistent) {
        // Not attached (never started, stopped, detached): nothing of the sandbox is known here.
        const conn = this.sandbox._conn
        return conn ? conn.call('list') : []
      }
      return [...this._tracked.values()].map((h) => processInfo(h))
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
      return this._track(handle)
    }

    /** @internal Tracks a spawned handle; at each exit, the oldest exited ones beyond the limit go. */
    _track(handle) {
      const tracked = this._tracked
      tracked.set(handle.pid, handle)
      const prune = () => pruneExited(tracked.values(), (h) => h.exitCode !== undefined, (h) => tracked.delete(h.pid))
      handle._waitPromise.then(prune, () => {})
      return handle
    }
  }

  traceMethods(NativeProcessManager, ['spawn', 'list', 'get', 'kill'])
  return NativeProcessManager
}

module.exports = { defineNativeProcessManager }
