'use strict'
// The local backend: processes run by this Node process on procvisor's native core (every
// sandbox that is not persistent, and the manager outside a sandbox), and the lifecycle of a
// sandbox whose running state lives in this Node process (lifetime.js).

const { launch, listenersOf } = require('../../lib/process/core.js')
const { request, ProcessManager } = require('../../lib/faces/manager.js')
const { binding } = require('../../lib/native/native.js')
const { ProcessManagerClosedError } = require('../../lib/native/errors.js')
const { ending, processInfo, stdinModeOf } = require('../../lib/process/mastra-rules.js')
const { RunningSandbox, runningSandboxes } = require('../lifetime.js')
const { isName } = require('../../lib/process/names.js')

/** How the sandbox's processes are contained: a cgroup each where this Node process has one. */
function containment() {
  return binding.resolveContainment('auto')
}

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
    /** Whether it has not finished yet (exited, output drained). */
    get running() {
      return core.exitCode() === undefined
    },
    feed(handle) {
      core.finish().then((exit) => {
        const end = ending(exit, { timeoutMs: core.timeout, lifetimeMs: handle._lifetimeMs })
        if (end.note) handle.emitStderr(end.note)
        handle._ended(end)
      })
    },
  }
}

/**
 * NativeProcessManager's spawn, list, get and release for processes of this Node process, and
 * the sandbox's find, connect, create, start, stop and destroy around Mastra's own (`mastra`).
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
    }
    const listeners = listenersOf({ onStdout: (data) => handle.emitStdout(data), onStderr: (data) => handle.emitStderr(data) })
    const req = request(command, launchOptions, [spec.env], spec.workingDirectory, containment(), manager.sandbox?._logFiles)
    manager._names.reserve(o.name)
    let core
    try {
      core = await launch('shell', req, { command, name: o.name }, listeners)
    } catch (e) {
      manager._names.release(o.name)
      throw e
    }
    handle._attach(localProcess(core))
    manager._names.bind(o.name, handle)
  },

  async list(manager) {
    return [...manager._tracked.values()].map((h) => processInfo(h))
  },

  async get(manager, pid) {
    if (!isName(pid)) return manager._tracked.get(pid)
    const named = manager._names.get(pid)
    return named && manager._tracked.get(named.pid) === named ? named : undefined
  },

  release() {},

  /** A terminal of the running sandbox, on its manager of terminals (made at the first). */
  async createTerminal(sandbox, spec) {
    const running = sandbox._running
    if (!running) throw new ProcessManagerClosedError(`sandbox ${sandbox.id} is ${sandbox.status}, not running; start() starts it`)
    const logs = sandbox._logFiles
    running.terminalManager ??= new ProcessManager({
      workingDirectory: sandbox.workingDirectory,
      containment: 'auto',
      ...(logs && { logDirectory: logs.directory, logMaxBytes: logs.maxBytes, logKeep: logs.keep }),
    })
    return running.terminalManager.createTerminal({ command: spec.argv, cwd: spec.cwd, env: spec.env, cols: spec.cols, rows: spec.rows })
  },

  async getTerminal(sandbox, id) {
    const manager = sandbox._running?.terminalManager
    return manager ? manager.getTerminal(id) : null
  },

  async listTerminals(sandbox) {
    const manager = sandbox._running?.terminalManager
    if (!manager) return []
    const terminals = await Promise.all((await manager.listTerminals()).map((s) => manager.getTerminal(s.id)))
    return terminals.filter(Boolean)
  },

  /** Joins the sandbox with this id and directory running in this Node process, else Mastra's find. */
  async find(sandbox, mastra, options) {
    sandbox._leaveRunning()
    const key = `${sandbox.id}\0${sandbox.workingDirectory}`
    const found = runningSandboxes.get(key)
    if (found && !found.ended) return found
    // Registered before the first await, so a sandbox started meanwhile joins this one.
    const running = new RunningSandbox(key, sandbox._timeoutMs, sandbox.processes._tracked, sandbox.processes._dismissed)
    runningSandboxes.set(key, running)
    sandbox._joinRunning(running)
    return sandbox._leavingOnError(() => mastra.find(options))
  },

  async connect(sandbox, mastra, handle, options) {
    if (handle instanceof RunningSandbox) {
      sandbox._joinRunning(handle)
      return sandbox._leavingOnError(() => mastra.connect(sandbox.workingDirectory, options))
    }
    return sandbox._leavingOnError(() => mastra.connect(handle, options))
  },

  async create(sandbox, mastra, options) {
    return sandbox._leavingOnError(() => mastra.create(options))
  },

  async start(sandbox, mastra, options) {
    return mastra.start(options)
  },

  async stop(sandbox, mastra) {
    await sandbox.processes._launches.settled()
    await sandbox.processes._stackDown()
    const { running, ending } = sandbox._leaveRunning({ end: true })
    await running?.closeTerminals()
    if (running?.expired) {
      // Marked just before Mastra's stop kills them, and only those still running then: an
      // earlier end is the process's own.
      for (const handle of running.tracked.values()) {
        if (handle._process?.running) handle._lifetimeMs = running.timeoutMs
      }
    }
    await mastra.stop()
    const name = sandbox._checkpointName
    if (sandbox._snapshotOnStop && !running?.destroying && !running?.captured.has(name)) {
      running?.captured.add(name)
      await sandbox.snapshot()
    }
    if (ending) await sandbox._stopJoined(running)
  },

  async destroy(sandbox, mastra) {
    const { running, ending } = sandbox._leaveRunning({ end: true })
    if (running) running.destroying = true
    await sandbox.processes._launches.settled()
    await sandbox.processes._stackDown()
    await running?.closeTerminals()
    await mastra.destroy()
    if (ending) await sandbox._stopJoined(running)
    await sandbox._removeOwnCheckpoints()
  },

  expiresAt(sandbox) {
    return sandbox._running?.expiresAt
  },
}

module.exports = { local }
