'use strict'
// The command line's view of this user's persistent sandboxes: found by their sockets in the
// user's private socket directory, each asked over its own socket (the supervisor's greeting
// says what it is), never by reading process tables.

const fs = require('node:fs')
const path = require('node:path')
const errors = require('../native/errors')
const { Connection } = require('../persistent/client')
const { socketDirectory, socketPath, checkId } = require('../persistent/location')
const { RemoteProcessView } = require('../persistent/handles')
const { remoteTerminal } = require('../persistent/remote-terminal')

/** How long a supervisor has to greet the command line: a stopped one is reported, not waited for. */
const GREETING_MS = 3000

/** An error the command line reports as one line and exit status 1. */
class CliError extends Error {}

/** The sockets in this user's socket directory: one per running (or crashed) sandbox. */
function socketFiles() {
  const dir = socketDirectory()
  return fs
    .readdirSync(dir)
    .filter((name) => /^sandbox-[0-9a-f]{32}\.sock$/.test(name))
    .map((name) => path.join(dir, name))
}

/** Every sandbox that answers on its socket, with a connection to it (the caller closes them). */
async function allSandboxes(onSkipped) {
  const found = []
  for (const sock of socketFiles()) {
    let conn
    try {
      conn = await Connection.open(sock, { greetingMs: GREETING_MS })
    } catch (e) {
      // A supervisor of another version, one ending right now, or one that does not answer:
      // not a sandbox to list, but worth a line.
      if (!(e instanceof errors.SandboxSupervisorLostError && /closed the connection/.test(e.message))) onSkipped?.(`${sock}: ${e.message}`)
      continue
    }
    if (conn) found.push(conn)
  }
  return found.sort((a, b) => a.sandbox.startedAt - b.sandbox.startedAt)
}

/** A connection to the sandbox with this id; CliError when none runs. */
async function openSandbox(id) {
  try {
    checkId(id)
  } catch (e) {
    throw new CliError(e.message)
  }
  let conn
  try {
    conn = await Connection.open(socketPath(id), { greetingMs: GREETING_MS })
  } catch (e) {
    throw new CliError(`sandbox ${id}: ${e.message}`)
  }
  if (!conn) throw new CliError(`no running sandbox with id ${id} (procvisor ls lists them)`)
  return conn
}

/** The Processes API of process `pid` of the sandbox; CliError when the sandbox has no such process. */
async function processOf(conn, pid) {
  const listed = (await conn.call('list')).find((p) => p.pid === String(pid))
  if (!listed) throw new CliError(`sandbox ${conn.sandbox.id} has no process ${pid} (procvisor ps ${conn.sandbox.id} lists them)`)
  return new RemoteProcessView(conn, listed.pid, { command: listed.command })
}

/** Terminal `id` of the sandbox; CliError when it has none of that id. */
async function terminalOf(conn, id) {
  const info = await conn.call('terminalGet', { id })
  if (!info) throw new CliError(`sandbox ${conn.sandbox.id} has no terminal ${id} (procvisor ps ${conn.sandbox.id} lists them)`)
  return remoteTerminal(conn, info)
}

module.exports = { CliError, allSandboxes, openSandbox, processOf, terminalOf }
