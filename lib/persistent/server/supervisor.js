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
const { binding } = require('../../native/native')
const { launch } = require('../../process/core')
const rules = require('../../process/mastra-rules')
const { request } = require('../../faces/manager')
const { ProcessHandle: CoreProcessHandle } = require('../../faces/handle')
const errors = require('../../native/errors')
const protocol = require('../wire/protocol')
const { decodeValue } = require('../wire/values')
const { serveSocket, followed } = require('./connection')
const { LogStream } = require('./feed')
const { logStart } = require('../../process/observe')
const { logPathOf } = require('../wire/location')
const { Place } = require('./place')
const { supervisorTerminals } = require('./terminals')
const { NameTable, isName } = require('../../process/names')
const { supervisorLogFiles } = require('../wire/log-files')
const { Launches } = require('../../process/launches')
const { Lifetime } = require('../../process/lifetime')

const { SANDBOX_ACCESS_DENIED } = errors.codes

// The config comes on stdin, written whole by the client, which then closes it.
const config = JSON.parse(fs.readFileSync(0, 'utf8'))
const startedAt = Date.now()
const containment = binding.resolveContainment('auto')
/** The send buffer asked for on each client's socket. */
const SEND_BUFFER = 4 * 1024 * 1024
/** Mastra's default retention per stream when a spawn names none. */
const DEFAULT_RETAINED = 1024 * 1024
/** Where this start's processes write their logs (wire/log-files.js), or null; made once it serves. */
let logFiles = null

/**
 * Mastra's `maxRetainedBytes` as it crossed the socket (`'Infinity'` keeps everything, as
 * in-process). A client of another build may send a value its own side would have refused: it is
 * refused here by the same rule.
 */
function retention(v) {
  if (v === undefined) return DEFAULT_RETAINED
  return rules.retainedBytes(v === 'Infinity' ? Infinity : v)
}

/**
 * pid (string) → { pid, pidNumber, command, stdinMode, retention, core, view, subscribers,
 * hold, result, finalSeq, note, released }. The output itself is the native process's: its log
 * (read by each client's feed) and its retained text (what `attach` answers).
 */
const records = new Map()
/** The processes' names, one live process each, whichever client spawned it. */
const names = new NameTable((rec) => rec.result === undefined, (rec) => rec.core.currentPid)
const clients = new Set()
let ending = undefined

function info(rec) {
  const out = rules.processInfo({ pid: rec.pid, command: rec.command, exitCode: rec.result?.exitCode, name: rec.name })
  // Which processes a person may open as a terminal (the web view, attach): those on a pty.
  if (rec.core?.native.onTerminal) out.pty = true
  return out
}

function settle(rec, exit) {
  const { note, ...result } = rules.ending(exit, { timeoutMs: rec.core.timeout, lifetimeMs: rec.lifetimeMs })
  // Mastra's note on a timeout is part of stderr, after all output and before the exit, for
  // every subscriber alike. It is not the process's output, so not in its log: it goes apart.
  if (note) rec.note = note
  // Finished: all the output a Mastra handle reports is in the log by now, up to here.
  rec.finalSeq = rec.core.native.lastSeq()
  rec.result = result
  for (const c of [...rec.subscribers]) c.feed.woken(rec)
  if (rec.released) forget(rec)
  rules.pruneExited(records.values(), (r) => r.result !== undefined, forget)
}

/**
 * Drops an exited process from the list. A client still being sent its output keeps it until it
 * was sent the exit: a process released elsewhere must not leave that client's wait() unanswered.
 */
function forget(rec) {
  records.delete(rec.pid)
  names.release(rec.name, rec)
}

/**
 * The record of a process by the pid it was spawned with, its name, or (a service's) the pid
 * of its current run, which `list` reports.
 */
function lookup(pid) {
  const key = String(pid)
  if (isName(key)) {
    const rec = names.get(key)
    return rec && records.get(rec.pid) === rec ? rec : undefined
  }
  const rec = records.get(key)
  if (rec) return rec
  for (const r of records.values()) if (r.core.service && String(r.core.currentPid) === key) return r
  return undefined
}

function recordOf(pid) {
  const rec = lookup(pid)
  if (!rec) throw new errors.ProcessNotFoundError(`No process with pid ${pid} in this sandbox`)
  return rec
}

/**
 * What `attach` answers: the process, its retained text, its result once exited; the client is
 * sent the output after that text, and the exit.
 */
function attached(rec, client) {
  const native = rec.core.native
  // The text and the log position it reaches, read together: output appended between the two
  // reads would be sent twice or never. Appends are rare enough that this settles at once.
  let seq
  let out
  for (let i = 0; ; i++) {
    seq = native.lastSeq()
    out = native.retainedOutput()
    if (native.lastSeq() === seq || i === 16) break
  }
  const max = rec.retention === Infinity ? 'Infinity' : rec.retention
  const answer = { ...info(rec), id: rec.core.id, stdinMode: rec.stdinMode, maxRetainedBytes: max, stdout: out.stdout, stderr: out.stderr, result: rec.result }
  if (rec.result === undefined) return followed(answer, () => client.feed.add(rec, seq))
  if (rec.note) answer.stderr += rec.note
  return answer
}

/** The Processes API methods a client may call on a process's view. */
const VIEW_METHODS = new Set(['status', 'output', 'waitForExit', 'waitForLog', 'waitForPort', 'stop', 'restart', 'kill', 'resize'])

/** The calls a client may make (checked by ./calls.js); no prototype, so no `constructor` or `__proto__`. */
const ops = Object.assign(Object.create(null), {
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
  }),

  async spawn(client, a) {
    if (ending) throw new errors.ProcessManagerClosedError('The sandbox is stopping')
    const retained = retention(a.maxRetainedBytes)
    names.reserve(a.name)
    const rec = {
      pid: '',
      pidNumber: 0,
      name: a.name,
      command: a.command,
      stdinMode: rules.stdinModeOf(a.stdinMode),
      retention: retained,
      subscribers: new Set(),
      /** Its `logs()` streams, of any client. */
      streams: new Set(),
      hold: 0,
      unwoken: false,
      result: undefined,
      finalSeq: 0,
      note: undefined,
      released: false,
      /** The Processes API view of the process (kill, stdin, the view calls), made when first used. */
      get view() {
        return (this._view ||= new CoreProcessHandle(this.core))
      },
    }
    const launchOptions = { argv: a.argv, cwd: a.cwd, timeout: a.timeout, stdinMode: rec.stdinMode, maxRetainedBytes: rec.retention, pty: a.pty, restart: a.restart, readiness: a.readiness, liveness: a.liveness, shutdown: a.shutdown }
    const req = request(a.command, launchOptions, [a.env || {}], config.workingDirectory, containment, logFiles)
    // What `describe` says of how it was started: the names of its environment, never the values.
    rec.started = { env: [...new Set(req.env.flatMap(Object.keys))].sort(), restart: a.restart, readiness: a.readiness, liveness: a.liveness, shutdown: a.shutdown, timeout: a.timeout }
    // Held at the first byte from the launch on, as for a reader: the spawning client is sent
    // every byte from there, and the hold then follows the clients that read (feed.js).
    try {
      rec.core = await launch('shell', req, { command: a.command, name: a.name }, [], true)
    } catch (e) {
      names.release(a.name)
      throw e
    }
    rec.core.readerMade = true
    rec.logFiles = logFiles !== null
    rec.pidNumber = rec.core.pid
    rec.pid = String(rec.pidNumber)
    records.set(rec.pid, rec)
    names.bind(a.name, rec)
    const max = rec.retention === Infinity ? 'Infinity' : rec.retention
    const answer = { ...info(rec), id: rec.core.id, stdinMode: rec.stdinMode, maxRetainedBytes: max, stdout: '', stderr: '', result: undefined }
    // The rest after the reply, which it does not need (the reply is on the path of every spawn):
    // the wake-up, the watch for the end, and the output from the first byte, which the client
    // must get after the reply anyway.
    return followed(answer, () => {
      rec.core.native.setReaderWake(() => {
        for (const c of [...rec.subscribers]) c.feed.woken(rec)
        for (const st of [...rec.streams]) st.next()
      })
      rec.core.finish().then((exit) => settle(rec, exit))
      client.feed.add(rec, 0)
    })
  },

  // A running service's pid is its current run's, as its status reports (lookups take either);
  // once it ended for good, the pid it was spawned with, which its handles have.
  list: () => [...records.values()].map((rec) => (rec.result === undefined ? { ...info(rec), pid: String(rec.core.currentPid) } : info(rec))),

  /** How a process was started and how it is now, for a person (`procvisor describe`). */
  describe: async (client, a) => {
    const rec = recordOf(a.pid)
    return { ...info(rec), ...rec.started, status: await rec.view.status() }
  },

  /** The pid a process was spawned with, which keys it, found by any of its ids; null for none. */
  lookup: (client, a) => lookup(a.pid)?.pid ?? null,

  attach: (client, a) => attached(recordOf(a.pid), client),

  unsubscribe(client, a) {
    const rec = lookup(a.pid)
    if (rec) client.feed.remove(rec)
  },

  release(client, a) {
    const rec = lookup(a.pid)
    if (!rec) return
    rec.released = true
    if (rec.result !== undefined) forget(rec)
  },

  async kill(client, a) {
    const rec = recordOf(a.pid)
    if (rec.result !== undefined) return false
    return rec.view.kill(a.signal)
  },

  async stdin(client, a) {
    const rec = recordOf(a.pid)
    stdinCheck(rec)
    const written = rec.view.sendStdin(a.data)
    // The write took a copy: the frame's bytes need not wait for the process to read them.
    a.data = undefined
    await written
  },

  async closeStdin(client, a) {
    const rec = recordOf(a.pid)
    stdinCheck(rec)
    await rec.view.closeStdin()
  },

  async view(client, a) {
    if (!VIEW_METHODS.has(a.method)) throw errors.invalidOption(`${a.method} is not a method of a process`)
    const rec = recordOf(a.pid)
    return rec.view[a.method](...decodeValue(a.args || []))
  },

  /**
   * Opens a stream of `logs(options)` for this client: its events are pushed to it (feed.js) in
   * BLOB frames that name the stream by the id this answers.
   */
  logsOpen(client, a) {
    const rec = recordOf(a.pid)
    const start = logStart(rec.core.native, decodeValue(a.options))
    const id = client.nextStream++
    const st = new LogStream(client, id, rec, start)
    client.streams.set(id, st)
    // Its events after the reply that names it.
    return followed(id, () => st.next())
  },

  logsClose(client, a) {
    client.streams.get(a.stream)?.close()
  },

  async shutdown() {
    await end('stopped')
  },
})

/** The sandbox's terminals (terminals.js): their calls are the supervisor's too. */
const terminals = supervisorTerminals({ workingDirectory: config.workingDirectory, logFiles: () => logFiles, ending: () => ending !== undefined })
Object.assign(ops, terminals.ops)

function stdinCheck(rec) {
  rules.checkStdin(rec.pid, rec.result?.exitCode, rec.stdinMode)
}

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
  serveSocket(socket, {
    ops,
    greeting: ops.info,
    opened: (client) => clients.add(client),
    closed: (client) => clients.delete(client),
  })
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
  const running = [...records.values()].filter((r) => r.result === undefined)
  if (reason === 'expired') for (const r of running) r.lifetimeMs = config.timeoutMs
  await Promise.all([...running.map((r) => r.view.kill().then(() => r.view.wait(), () => {})), terminals.close()])
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
  // Counted from the start, and held: the end of the lifetime is this process's job even while
  // no socket or process keeps it up (a listener being replaced).
  lifetime = new Lifetime(config.timeoutMs || null, () => end('expired'), { since: startedAt, keepAlive: true })
  process.on('SIGTERM', () => end('terminated'))
  process.stdout.write(`${JSON.stringify({ ready: true, pid: process.pid })}\n`)
  // The client closes its end once it read that line; nothing is written there again.
  process.stdout.on('error', () => {})
}

main().catch((e) => {
  process.stdout.write(`${JSON.stringify({ error: protocol.fromError(e) })}\n`)
  process.exit(1)
})
