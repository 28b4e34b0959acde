'use strict'
// server/: the supervisor process and what only it uses; requires wire/ only from lib/persistent.
//
// lib/persistent/: a persistent sandbox's supervisor process (server/), the socket protocol both
// sides speak (wire/), and the client in the Node processes that attach (client/). Requires
// lib/faces/, lib/process/ and lib/native/; in lib/ only the command line (lib/cli/) requires it
// (mastra/ does too).
//
// The supervisor of one persistent sandbox: `node supervisor.js` with its config as JSON on
// stdin, started detached by the first `start()` of a sandbox with `persistent: true` and found
// again by later ones over its Unix socket. Its processes run under procvisor as anywhere else
// (cgroup or process group each, the watchdog kills them should this process die by SIGKILL), so
// they outlive the Node processes that attach, never the supervisor.
//
// It ends in three ways only: `stop()`/`destroy()` from a client (the `shutdown` call), the end
// of the sandbox's lifetime when it has one (`timeoutMs` from its start, enforced here whether or not anyone is
// attached; the working directory is captured first with `snapshotOnStop`), or its id being
// taken by another supervisor after its lock file was deleted (nobody could reach it any more).
// A deleted socket file is put back (place.js).
//
// It prints one JSON line on stdout once it serves (`{"ready":true}`), or once it found another
// supervisor holding the id (`{"existing":true}`), and never writes there again.

const fs = require('node:fs')
const net = require('node:net')
const path = require('node:path')
const { binding } = require('../../native/native')
const { ProcessManager } = require('../../faces/manager')
const errors = require('../../native/errors')
const protocol = require('../wire/protocol')
const { serveSocket } = require('./connection')
const { logPathOf } = require('../wire/location')
const { Place } = require('./place')
const { sweepStale, SWEEP_DELAY_MS } = require('./sweep')
const { servedProcesses } = require('./processes')
const { supervisorTerminals } = require('./terminals')
const { supervisorLogFiles } = require('../wire/log-files')
const { serveSharedOutput } = require('./shared-output')
const { Launches } = require('../../process/launches')
const { Lifetime } = require('../../process/lifetime')
const { captureCallSites } = require('../../native/trace')

const { SANDBOX_ACCESS_DENIED } = errors.codes

// Tuned for launches that come over the socket: no caller's frames to keep (an error crosses as
// a code and a message, and the client grafts its own program's frames), and no launcher awake
// after an end for a launch that is two socket hops away.
captureCallSites(false)
binding.setLaunchStandBy(false)
// Launched on this thread while none of its processes runs: it serves only the socket, and such
// a launch costs two wake-ups between threads less (spawn until exit over the socket, one at a
// time: 5% faster, 45 µs less supervisor CPU per spawn; 16 in flight, which keep processes
// live, unchanged).
binding.setInlineLaunches(true)

// The config comes on stdin, written whole by the client, which then closes it.
const config = JSON.parse(fs.readFileSync(0, 'utf8'))
const startedAt = Date.now()
/** The send buffer asked for on each client's socket. */
const SEND_BUFFER = 4 * 1024 * 1024
/** The buffer each client's socket is read into, as large as the one Node allocates per read. */
const READ_BUFFER = 64 * 1024
/** Where this start's processes write their logs (wire/log-files.js), or null; made once it serves. */
let logFiles = null
/**
 * The sandbox's processes and terminals: one ProcessManager, the in-process backend, made once
 * it serves (where the logs go is known then). Every process call maps onto it.
 */
let manager
/** Where the rings of the processes' output are handed out (shared-output.js), or null. */
let sharedOutput = null
const clients = new Set()
let ending = undefined

const served = {
  // A call that came in before the manager was made (the socket listens a moment earlier).
  manager: () => {
    if (!manager) throw new errors.ProcessManagerClosedError('the sandbox is still starting; call again')
    return manager
  },
  logFiles: () => logFiles !== null,
  ending: () => ending !== undefined,
}
const processes = servedProcesses(served)
const terminals = supervisorTerminals(served)

/** The calls a client may make (checked by ./calls.js); no prototype, so no `constructor` or `__proto__`. */
const ops = Object.assign(Object.create(null), processes.ops, terminals.ops, {
  info: () => ({
    id: config.id,
    workingDirectory: config.workingDirectory,
    startedAt,
    expiresAt: lifetime?.expiresAt ?? null,
    pid: process.pid,
    // Where its checkpoints are and which one a stop captures, so that any client (the command
    // line too) can stop or destroy it as the sandbox would.
    checkpointsDirectory: config.checkpointsDirectory ?? config.snapshot?.checkpointsDirectory ?? null,
    snapshot: config.snapshot ?? null,
    logDirectory: logFiles?.directory ?? null,
    sharedOutput,
  }),

  async shutdown() {
    await end('stopped')
  },
})

function accept(socket) {
  // A client that resets its connection is no reason for the supervisor, and every process of
  // the sandbox, to die.
  socket.on('error', () => {})
  // The kernel's word on who connected, before a byte of it is read.
  let other
  try {
    other = binding.peerCredentials(socket._handle.fd)
  } catch (e) {
    socket.destroy()
    return
  }
  if (other.uid !== process.getuid()) {
    socket.end(protocol.encode({ t: 'refused', code: SANDBOX_ACCESS_DENIED, message: `this sandbox serves uid ${process.getuid()} only, not uid ${other.uid}` }))
    return
  }
  // Output crosses in steps of the kernel's buffer, each waking both sides: a wider one (what
  // the kernel allows, `wmem_max`) makes fewer, larger steps.
  try {
    binding.setSocketSendBuffer(socket._handle.fd, SEND_BUFFER)
  } catch {
    // The default buffer works too.
  }
  // Read into a buffer of its own, reused: the server's socket (paused since it was accepted)
  // would allocate a Buffer per read, garbage that V8 frees only at its next collection: 2 bytes
  // of it per byte of a client's stdin, up to 64 MiB at a time under Node 24.
  let fd
  let own
  try {
    fd = binding.duplicateSocket(socket._handle.fd)
    let received = () => {}
    // Returns nothing: a callback that returns false pauses the socket.
    const onread = { buffer: Buffer.allocUnsafe(READ_BUFFER), callback: (n, buf) => void received(buf.subarray(0, n)) }
    own = new net.Socket({ fd, readable: true, writable: true, onread })
    own.on('error', () => {})
    received = serveSocket(own, host)
  } catch {
    // No second descriptor (none left), or no socket made of it: this connection is dropped,
    // the supervisor and its other clients go on.
    if (own) own.destroy()
    else if (fd !== undefined) closeQuietly(fd)
  }
  socket.destroy()
}

function closeQuietly(fd) {
  try {
    fs.closeSync(fd)
  } catch {}
}

/** What the supervisor's side of a connection is served by (connection.js). */
const host = {
  ops,
  greeting: ops.info,
  sharesOutput: () => sharedOutput !== null,
  opened: (client) => clients.add(client),
  closed: (client) => clients.delete(client),
}

/** Kills every process, captures the working directory if asked, tells the clients, exits. */
function end(reason) {
  if (!ending) ending = finish(reason)
  return ending
}

/** Spawns under way, which the end waits for (lib/process/launches.js says why). */
const launches = new Launches()
const spawnOp = ops.spawn
ops.spawn = (client, a) => launches.track(spawnOp(client, a))

async function finish(reason) {
  lifetime?.cancel()
  await launches.settled()
  try {
    await processes.end(reason === 'expired' ? config.timeoutMs : undefined)
  } catch (e) {
    // The end goes on whatever failed: a supervisor that cannot end would never let the id go.
    // What still runs dies with it (the watchdog).
    console.error(`procvisor sandbox ${config.id}: ending its processes failed: ${e.message}`)
  }
  if (reason === 'expired' && config.snapshot) {
    const s = config.snapshot
    try {
      await binding.captureCheckpoint(config.workingDirectory, s.checkpointsDirectory, s.checkpointName, config.id)
    } catch (e) {
      console.error(`procvisor sandbox ${config.id}: capturing the checkpoint at the end of the lifetime failed: ${e.message}`)
    }
  }
  for (const c of clients) c.send({ t: 'event', kind: 'ended', reason })
  if (place.release()) {
    // The log only matters after a crash; an orderly end leaves nothing behind.
    fs.rmSync(logPathOf(config.socketPath), { force: true })
    if (sharedOutput) fs.rmSync(sharedOutput, { force: true })
  }
  // The replies and the last events are flushed before the exit.
  setImmediate(() => {
    for (const c of clients) c.socket.end()
    setTimeout(() => process.exit(0), 50).unref()
  })
}

const place = new Place(config.socketPath, accept, () => end('replaced'))
/** The sandbox's lifetime, once it serves; none for `timeoutMs: 0`, which runs until it is stopped. */
let lifetime

async function main() {
  // The lock decides: of two supervisors started for one id, the one that cannot take it leaves,
  // and its client waits for the holder's socket.
  if (!(await place.take())) {
    process.stdout.write(`${JSON.stringify({ existing: true })}\n`)
    process.exit(0)
  }
  logFiles = supervisorLogFiles(config, startedAt)
  sharedOutput = serveSharedOutput(config.socketPath)
  manager = new ProcessManager({
    workingDirectory: config.workingDirectory,
    containment: 'auto',
    ...(logFiles && { logDirectory: logFiles.directory, logMaxBytes: logFiles.maxBytes, logKeep: logFiles.keep }),
  })
  // Counted from the start, and held: the end of the lifetime is this process's job even while
  // no socket or process keeps it up (a listener being replaced).
  lifetime = new Lifetime(config.timeoutMs || null, () => end('expired'), { since: startedAt, keepAlive: true })
  process.on('SIGTERM', () => end('terminated'))
  process.stdout.write(`${JSON.stringify({ ready: true, pid: process.pid })}\n`)
  // What killed supervisors of other ids left beside this one's socket (sweep.js).
  setTimeout(() => sweepStale(path.dirname(config.socketPath), config.socketPath), SWEEP_DELAY_MS).unref()
  // The client closes its end once it read that line; nothing is written there again.
  process.stdout.on('error', () => {})
}

main().catch((e) => {
  process.stdout.write(`${JSON.stringify({ error: protocol.fromError(e) })}\n`)
  process.exit(1)
})
