'use strict'
// The local backend: processes run by this Node process on procvisor's native core (every
// sandbox that is not persistent, and the manager outside a sandbox). What holds the sandbox
// running is its runtime's (runtime/in-process.js).

const { listenersOf } = require('../../lib/process/core.js')
const { request } = require('../../lib/faces/manager.js')
const { ending, processInfo, stdinModeOf } = require('../../lib/process/mastra-rules.js')
const { isName } = require('../../lib/process/names.js')

/**
 * One process of this Node process as a NativeProcessHandle is attached to it: its core is its
 * port (lib/process/port.js), and its output already reaches the handle through the launch's
 * listeners; `feed` adds the end.
 */
function localProcess(core) {
  return {
    port: core,
    pid: String(core.pid),
    name: core.name,
    feed(handle) {
      core.finish().then((exit) => {
        const end = ending(exit, { timeoutMs: core.timeout, lifetimeMs: core.lifetimeMs })
        if (end.note) handle.emitStderr(end.note)
        handle._ended(end)
      })
    },
  }
}

/**
 * NativeProcessManager's spawn, list, get and release, and a sandbox's terminals, for processes
 * of this Node process: on the in-process backend, the running sandbox's ProcessManager (the
 * backend a persistent sandbox's supervisor serves too), which keeps them, their names and
 * terminals, and ends them with the sandbox.
 */
const local = {
  /** Starts `command` here; `handle` gets its output from the first byte. */
  async spawn(manager, handle, command, spec) {
    const o = spec.options
    const launchOptions = {
      argv: spec.argv,
      cwd: spec.cwd,
      timeout: o.timeout ? o.timeout : undefined,
      stdinMode: stdinModeOf(o.stdinMode),
      maxRetainedBytes: 0, // Mastra's base class retains the text; procvisor keeps none
      pty: o.pty,
      restart: o.restart,
      readiness: o.readiness,
      liveness: o.liveness,
      shutdown: o.shutdown,
      name: o.name,
    }
    const listeners = listenersOf({ onStdout: (data) => handle.emitStdout(data), onStderr: (data) => handle.emitStderr(data) })
    // Contained and logged as the backend's processes are (a cgroup each where this Node process
    // has one; the sandbox's logDirectory), resolved once when the backend was made.
    const backend = manager._inProcess()
    const req = request(command, launchOptions, [spec.env], spec.workingDirectory, backend.containment, backend._logFiles)
    // Tracked by the backend's Mastra surface (names, lookups); its output reaches the handle
    // through the listeners, so no reader is held for.
    const { core } = await backend._start('shell', req, listeners, true, false)
    handle._attach(localProcess(core))
  },

  async list(manager) {
    return [...manager._tracked.values()].map((h) => processInfo(h))
  },

  /** A tracked handle by its pid, or by the name of a live process the backend knows it by. */
  async get(manager, pid) {
    if (!isName(pid)) return manager._tracked.get(pid)
    const found = manager._inProcess()._find(pid)
    return found ? manager._tracked.get(found.pid) : undefined
  },

  /** The backend forgets it too (its Processes API table keeps the last exited ones). */
  release(manager, pid) {
    manager._inProcess({ create: false })?.release(pid)
  },

  /** A terminal of the running sandbox, on its backend. */
  async createTerminal(sandbox, spec) {
    return sandbox._runtime.processManager({ create: true }).createTerminal({ command: spec.argv, cwd: spec.cwd, env: spec.env, cols: spec.cols, rows: spec.rows })
  },

  async getTerminal(sandbox, id) {
    const backend = sandbox._runtime.processManager()
    return backend ? backend.getTerminal(id) : null
  },

  async listTerminals(sandbox) {
    const backend = sandbox._runtime.processManager()
    if (!backend) return []
    const terminals = await Promise.all((await backend.listTerminals()).map((s) => backend.getTerminal(s.id)))
    return terminals.filter(Boolean)
  },
}

module.exports = { local }
