'use strict'
// `procvisor web`: the local web view (lib/web/) of this user's persistent sandboxes, found
// afresh for every page as `procvisor ls` finds them. The URL, with its token, is the first line
// of stdout; the server runs until Ctrl-C (or SIGTERM).

const { startServer } = require('../web/server')
const { processRow, stop } = require('./commands')
const { destroy } = require('./destroy')
const { CliError, allSandboxes, openSandbox, processOf, terminalOf } = require('./sandboxes')
const { checkpointsAt, placesOf } = require('./checkpoint')
const { act, listed, withCheckpoints } = require('../web/checkpoints')

/** The web view's catalog: every sandbox that answers on its socket, and its processes. */
const persistentCatalog = {
  async list() {
    const conns = await allSandboxes()
    try {
      const groups = []
      for (const conn of conns) {
        const s = conn.sandbox
        const expiresAt = s.expiresAt === null || s.expiresAt === undefined ? null : new Date(s.expiresAt).getTime()
        const group = { key: s.id, kind: 'sandbox', title: `sandbox ${s.id}`, detail: `${s.workingDirectory} · supervisor pid ${s.pid}`, expiresAt, canStop: true, canDestroy: true, processes: [] }
        try {
          for (const listed of await conn.call('list')) {
            const row = await processRow(conn, listed)
            const { restarts, gaveUp, ready, healthy, startedAt, cpuTimeMs, memoryBytes } = row
            group.processes.push({ ref: row.pid, name: row.name, command: row.command, pid: row.pid, state: row.state, exitCode: row.exitCode, terminal: false, pty: listed.pty === true, restarts, gaveUp, ready, healthy, startedAt, cpuTimeMs, memoryBytes })
          }
          // The sandbox's terminals, by their ids (a process's ref is its pid, all digits).
          for (const t of await conn.call('terminalList')) {
            const st = await (await terminalOf(conn, t.id)).status()
            group.processes.push({ ref: t.id, command: t.id, pid: t.pid, state: st.state, exitCode: st.exit?.code, terminal: true })
          }
        } catch (e) {
          // A sandbox stopping while it is listed: said on the page, the others still shown.
          group.error = e.message
        }
        const cps = s.checkpointsDirectory
        if (cps) await withCheckpoints(group, () => listed(cps, () => checkpointsAt(s).list()))
        groups.push(group)
      }
      return groups
    } finally {
      for (const conn of conns) conn.close()
    }
  },
  /** The index's Kill and Restart of a process (by its pid) or terminal (by its id). */
  async processAction(key, ref, action, signal) {
    let conn
    try {
      conn = await openSandbox(key)
      if (!/^[1-9][0-9]*$/.test(ref)) {
        if (action !== 'kill') return false
        await (await terminalOf(conn, ref)).kill(signal)
      } else if (action === 'kill') {
        await processOf(conn, ref)
        await conn.call('kill', { pid: ref, signal })
      } else await (await processOf(conn, ref)).restart()
      return true
    } catch (e) {
      if (e instanceof CliError) return false
      throw e
    } finally {
      if (conn) conn.close()
    }
  },
  /** The index's Stop and Destroy: what `procvisor stop` and `procvisor destroy` do. */
  async groupAction(key, action) {
    const quiet = { out: { write() {} }, err: { write() {}, isTTY: false } }
    try {
      await (action === 'stop' ? stop : destroy)({ sandbox: key }, quiet)
      return true
    } catch (e) {
      if (e instanceof CliError) return false
      throw e
    }
  },
  /** A checkpoint button: what `procvisor checkpoint capture|restore|rm` does. */
  async checkpointAction(key, action, name) {
    let s
    try {
      s = await placesOf(key)
    } catch (e) {
      if (e instanceof CliError) return false
      throw e
    }
    return act(checkpointsAt(s), action, name)
  },
  async open(key, ref) {
    let conn
    try {
      conn = await openSandbox(key)
      const target = /^[1-9][0-9]*$/.test(ref) ? await processOf(conn, ref) : await terminalOf(conn, ref)
      return { target, close: () => conn.close() }
    } catch (e) {
      if (conn) conn.close()
      if (e instanceof CliError) return null
      throw e
    }
  },
}

async function web(args, io) {
  let port = 0
  if (args.port !== undefined) {
    port = /^[0-9]{1,5}$/.test(args.port) ? Number(args.port) : NaN
    if (!(port >= 0 && port <= 65535)) throw new (require('./main').UsageError)(`--port must be a port number (0 to 65535), not ${JSON.stringify(args.port)}`)
  }
  let view
  try {
    view = await startServer({ catalog: persistentCatalog, port, host: '127.0.0.1' })
  } catch (e) {
    if (e && e.code === 'EADDRINUSE') throw new CliError(`port ${port} is in use`)
    throw e
  }
  io.out.write(`${view.url}\n`)
  io.err.write('procvisor web: open the URL above (it holds the token); Ctrl-C stops\n')
  await new Promise((resolve) => {
    const stop = () => {
      process.removeListener('SIGINT', stop)
      process.removeListener('SIGTERM', stop)
      resolve()
    }
    process.on('SIGINT', stop)
    process.on('SIGTERM', stop)
  })
  await view.close()
  return 0
}

module.exports = { web, persistentCatalog }
