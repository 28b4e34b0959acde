'use strict'
// The command line's view of this user's persistent sandboxes: found by their sockets in the
// user's private socket directory, each asked over its own socket (the supervisor's greeting
// says what it is), never by reading process tables.

const fs = require('node:fs')
const path = require('node:path')
const errors = require('../native/errors')
const { Connection } = require('../persistent/client/client')
const { socketDirectory, socketPath, checkId } = require('../persistent/wire/location')
const port = require('../persistent/client/port')
const { deadline } = require('./deadline')

/** How long a supervisor has to greet the command line: a stopped one is reported, not waited for. */
const GREETING_MS = 3000

/** An error the command line reports as one line and exit status 1. */
class CliError extends Error {}

/** A supervisor that let a call's deadline pass. */
class DeadlineError extends CliError {}

/**
 * Input typed into a program waits for the program to read it, not for the supervisor: `attach`
 * and the web view's terminals send it, and a program busy for a while is no fault.
 */
function waitsForProgram(op, args) {
  return op === 'stdin' || op === 'closeStdin' || (op === 'terminalCall' && args && args.method === 'write')
}

/**
 * Gives every call on `conn` the deadline: past it, the call fails with DeadlineError and the
 * connection is dropped (a reply that comes later has nobody to go to). A follow stream is not
 * a call: once opened, it lasts as long as the process writes.
 */
function withDeadline(conn) {
  const call = conn.call.bind(conn)
  conn.call = (op, args, onReply) => {
    const reply = call(op, args, onReply)
    if (waitsForProgram(op, args)) return reply
    const ms = deadline.ms
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        const s = conn.sandbox
        reject(new DeadlineError(`sandbox ${s.id}: its supervisor (pid ${s.pid}) did not answer within ${ms} ms (is it stuck? --timeout MS waits longer)`))
        conn.socket.destroy()
      }, ms)
      reply.then(resolve, reject).finally(() => clearTimeout(timer))
    })
  }
  return conn
}

function open(sock) {
  return Connection.open(sock, { greetingMs: Math.min(GREETING_MS, deadline.ms) })
}

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
      conn = await open(sock)
    } catch (e) {
      // A supervisor of another version, one ending right now, or one that does not answer:
      // not a sandbox to list, but worth a line.
      if (!(e instanceof errors.SandboxSupervisorLostError && /closed the connection/.test(e.message))) onSkipped?.(`${sock}: ${e.message}`)
      continue
    }
    if (conn) found.push(withDeadline(conn))
  }
  return found.sort((a, b) => a.sandbox.startedAt - b.sandbox.startedAt)
}

/** A connection to the sandbox with this id, or null when no supervisor answers at its socket. */
async function openRunning(id) {
  try {
    checkId(id)
  } catch (e) {
    throw new CliError(e.message)
  }
  let conn
  try {
    conn = await open(socketPath(id))
  } catch (e) {
    throw new CliError(`sandbox ${id}: ${e.message}`)
  }
  return conn && withDeadline(conn)
}

/** A connection to the sandbox with this id; CliError when none runs. */
async function openSandbox(id) {
  const conn = await openRunning(id)
  if (!conn) throw new CliError(`no running sandbox with id ${id} (procvisor ls lists them)`)
  return conn
}

/**
 * The Processes API of process `pid` of the sandbox: the pid it was spawned with, its name, or
 * a service's current run's, which the supervisor resolves. CliError when it has no such process.
 */
async function processOf(conn, pid) {
  const key = await conn.call('lookup', { pid: String(pid) })
  if (key === null) throw new CliError(`sandbox ${conn.sandbox.id} has no process ${pid} (procvisor ps ${conn.sandbox.id} lists them)`)
  const listed = await conn.call('list')
  const entry = listed.find((p) => p.pid === String(pid) || p.name === pid) ?? listed.find((p) => p.pid === key)
  return port.processView(conn, key, { command: entry?.command })
}

/** Terminal `id` of the sandbox; CliError when it has none of that id. */
async function terminalOf(conn, id) {
  const info = await conn.call('terminalGet', { id })
  if (!info) throw new CliError(`sandbox ${conn.sandbox.id} has no terminal ${id} (procvisor ps ${conn.sandbox.id} lists them)`)
  return port.terminalOf(conn, info)
}

module.exports = { CliError, DeadlineError, allSandboxes, openRunning, openSandbox, processOf, terminalOf }
