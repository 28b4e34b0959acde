'use strict'
// The remote backend: a persistent NativeLocalSandbox's processes, which run under its
// supervisor; this Node process starts, lists and attaches to them over the connection its
// runtime holds (runtime/supervised.js).

const path = require('node:path')
const { ProcessNotFoundError } = require('../../lib/native/errors.js')
const { processPort, terminalOf } = require('../../lib/persistent/client/port.js')
const { stdinModeOf } = require('../../lib/process/mastra-rules.js')
const { checkName, isName } = require('../../lib/process/names.js')

/** `maxRetainedBytes` as it crosses the socket, and back: JSON has no Infinity. */
const toWire = (bytes) => (bytes === Infinity ? 'Infinity' : bytes)
const fromWire = (bytes) => (bytes === 'Infinity' ? Infinity : bytes)

/**
 * One process of the sandbox's supervisor as a NativeProcessHandle is attached to it, made from
 * the supervisor's answer to `spawn` or `attach` (the process, the text it kept, its result once
 * exited). `spawned`: the answer to a spawn, whose output reaches the handle from the next turn
 * on, as a local process's does, so that a `reader` or listener added right after `spawn()`
 * resolves gets it from the first byte. An attached one (`get()`) begins with the text the
 * supervisor kept.
 */
function remoteProcess(conn, answer, { spawned = false } = {}) {
  const pid = String(answer.pid)
  return {
    port: processPort(conn, pid, { id: answer.id, command: answer.command, name: answer.name }),
    pid,
    name: answer.name,
    /** Runs as the answer is read, before any later frame: the handle misses no event. */
    feed(handle) {
      let queue = spawned ? [] : undefined
      const deliver = (task) => (queue ? queue.push(task) : task())
      if (queue) {
        setImmediate(() => {
          const tasks = queue
          queue = undefined
          for (const task of tasks) task()
        })
      }
      const end = (result) => {
        conn.subscribers.delete(pid)
        handle._ended(result)
      }
      conn.subscribers.set(pid, (m) => {
        if (m.kind === 'out') deliver(() => (m.stream === 0 ? handle.emitStdout(m.data) : handle.emitStderr(m.data)))
        else if (m.kind === 'exit') deliver(() => end(m.result))
        // At once: the wait() it ends must not wait for output that will never come.
        else if (m.kind === 'gone') handle._lost(m.error)
      })
      if (answer.stdout) deliver(() => handle.emitStdout(answer.stdout))
      if (answer.stderr) deliver(() => handle.emitStderr(answer.stderr))
      if (answer.result) deliver(() => end(answer.result))
    },
  }
}

/** NativeProcessManager's spawn, list, get and release, and a sandbox's terminals, in a persistent sandbox. */
const remote = {
  /** The supervisor starts `command`; `handle` gets its output from the first byte. */
  async spawn(manager, handle, command, spec) {
    const conn = manager.sandbox._runtime.connection()
    const o = spec.options
    // The supervisor keeps names unique among its processes; their form is checked before the call.
    checkName(o.name)
    const args = {
      command,
      argv: spec.argv,
      // Resolved here, against this Node process's directory: the supervisor's is another.
      cwd: path.resolve(spec.cwd),
      env: spec.env,
      timeout: o.timeout ? o.timeout : undefined,
      stdinMode: stdinModeOf(o.stdinMode),
      pty: o.pty,
      restart: o.restart,
      readiness: o.readiness,
      liveness: o.liveness,
      shutdown: o.shutdown,
      maxRetainedBytes: toWire(o.maxRetainedBytes),
      name: o.name,
    }
    await conn.call('spawn', args, (answer) => handle._attach(remoteProcess(conn, answer, { spawned: true })))
  },

  /**
   * Every process of the supervisor, whichever Node process started it, but those this object
   * released or read after their exit (Mastra's prune): they are gone for it, as in a local
   * sandbox, while the supervisor keeps them for other Node processes and for their handles'
   * `nativeHandle`.
   */
  async list(manager) {
    // Not attached (never started, stopped, detached): nothing of the sandbox is known here.
    const conn = manager.sandbox._runtime.currentConnection()
    if (!conn) return []
    const dismissed = manager._dismissed
    return (await conn.call('list')).filter((p) => !dismissed.has(p.pid))
  },

  /**
   * A tracked handle, or one made for a process that another Node process started (or this
   * one, before a restart), with the text the supervisor kept.
   */
  async get(manager, pid) {
    // A name's process is the supervisor's to say (another Node process may have taken it since).
    let tracked = isName(pid) ? undefined : manager._tracked.get(pid)
    if (tracked) return tracked
    const conn = manager.sandbox._runtime.connection()
    // The pid it was spawned with, which keys it here and on the socket (a name, or a service's
    // current pid, is another way to it): a process tracked already is not attached twice.
    const key = await conn.call('lookup', { pid: String(pid) })
    if (key === null) return undefined
    tracked = manager._tracked.get(key)
    if (tracked) return tracked
    let handle
    try {
      await conn.call('attach', { pid: key }, (answer) => {
        // The retention the process was spawned with, so the handle keeps all the supervisor sent.
        const kept = fromWire(answer.maxRetainedBytes)
        handle = manager._newHandle({ ...(typeof kept === 'number' && { maxRetainedBytes: kept }), stdinMode: answer.stdinMode })
        handle.command = answer.command
        handle._attach(remoteProcess(conn, answer))
      })
    } catch (e) {
      if (e instanceof ProcessNotFoundError) return undefined
      throw e
    }
    return manager._track(handle)
  },

  /** The supervisor forgets the process too, once it exited. */
  release(manager, pid) {
    const conn = manager.sandbox._runtime.attached()
    if (conn) conn.call('release', { pid: String(pid) }).catch(() => {})
  },

  /** The supervisor starts the terminal and keeps it, for this Node process and the next. */
  async createTerminal(sandbox, spec) {
    const conn = sandbox._runtime.connection()
    const env = {}
    // Resolved here: the supervisor's own directory and environment are not this process's.
    for (const [k, v] of Object.entries(spec.env)) if (v !== undefined) env[k] = v
    const args = { argv: spec.argv, cwd: path.resolve(spec.cwd), env, cols: spec.cols, rows: spec.rows }
    return terminalOf(conn, await conn.call('terminalCreate', args))
  },

  async getTerminal(sandbox, id) {
    const conn = sandbox._runtime.connection()
    const info = await conn.call('terminalGet', { id })
    return info ? terminalOf(conn, info) : null
  },

  async listTerminals(sandbox) {
    const conn = sandbox._runtime.currentConnection()
    if (!conn) return []
    return (await conn.call('terminalList')).map((info) => terminalOf(conn, info))
  },
}

module.exports = { remote }
