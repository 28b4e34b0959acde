'use strict'
// client/: what only the Node processes that attach use; requires wire/ only from lib/persistent (server/supervisor.js it runs, never requires).
//
// A Node process's side of a persistent sandbox: finding or starting the supervisor, and one
// connection to it that carries calls, replies and the processes' output.

const { EventEmitter } = require('node:events')
const fs = require('node:fs')
const net = require('node:net')
const path = require('node:path')
const { spawn } = require('node:child_process')
const { binding } = require('../../native/native')
const errors = require('../../native/errors')
const protocol = require('../wire/protocol')
const { attachments, encodeValue, decodeValue } = require('../wire/values')
const { Inbox, canShare } = require('./inbox')
const { openLogs } = require('./log-reader')
const { FrameReader } = require('../wire/reader')
const { InputGate } = require('./input')
const { logPathOf, lockHeld } = require('../wire/location')

const SUPERVISOR = path.join(__dirname, '..', 'server', 'supervisor.js')
/** How long a new supervisor may take to serve before its start is reported as failed. */
const START_TIMEOUT_MS = 15_000
/**
 * How long a client waits for a supervisor that holds the id but has no socket: it puts a deleted
 * one back within a second (server/place.js), and an ending one lets go of the id in a moment.
 */
const WAIT_MS = 5_000

/**
 * Calls whose answer nobody waits for (letting go of an exited process or of a log stream): sent
 * without asking for a reply, they cost the supervisor no write and this process no wake-up.
 */
const QUIET = new Set(['release', 'logsClose'])

/** How long a supervisor that accepted a connection has to send its hello. */
const GREETING_MS = 10_000

/** Bytes read from the socket at once, into one buffer. */
const READ_BUFFER = 1024 * 1024

/** A message whose bytes outlive the read they came in. */
function copied(m) {
  return m.t === 'out' ? { ...m, data: Buffer.from(m.data) } : m
}

function lost(message) {
  return new errors.SandboxSupervisorLostError(message)
}

/**
 * One connection to a supervisor. Calls are answered in any order (by id); the processes' output
 * and exits arrive as events, handed to `subscribers` (by pid) through the inbox. The socket does
 * not keep Node alive by itself: only while a call or a `hold()` (a pending `wait()`) is
 * outstanding.
 */
class Connection extends EventEmitter {
  constructor(socket, socketPath) {
    super()
    this.socket = socket
    this.socketPath = socketPath
    this.sandbox = undefined
    this.pending = new Map()
    this.nextId = 1
    this.holds = 0
    this.closed = false
    this.lostError = undefined
    this.ended = undefined
    this.frames = new FrameReader({ reused: true })
    this.greeted = false
    this.subscribers = new Map()
    this.inbox = new Inbox(this)
    /** The parts read so far of replies too large for one frame, by call id. */
    this.parts = new Map()
    /** Why the supervisor disconnected this client, when it said. */
    this.refusal = undefined
    /** Stdin and terminal writes, held back past what the supervisor holds for a client. */
    this.input = new InputGate()
  }

  /**
   * Connects to the supervisor at `socketPath`; null when none answers there. A supervisor that
   * accepts but does not greet within `greetingMs` (stopped, say, by SIGSTOP) is
   * SandboxSupervisorLostError rather than a wait without end.
   */
  static async open(socketPath, { greetingMs = GREETING_MS } = {}) {
    const conn = new Connection(null, socketPath)
    const socket = await new Promise((resolve, reject) => {
      // Read into one buffer, reused (see wire/reader.js).
      const onread = { buffer: Buffer.allocUnsafe(READ_BUFFER), callback: (n, buf) => conn.read(buf.subarray(0, n)) }
      const s = net.connect({ path: socketPath, onread })
      s.once('connect', () => resolve(s))
      s.once('error', (e) => (['ENOENT', 'ECONNREFUSED'].includes(e.code) ? resolve(null) : reject(e)))
    })
    if (!socket) return null
    conn.socket = socket
    // The kernel's word on who listens there: a socket of another user is never spoken to.
    const other = binding.peerCredentials(socket._handle.fd)
    if (other.uid !== process.getuid()) {
      socket.destroy()
      throw new errors.SandboxAccessError(`the sandbox socket ${socketPath} is served by uid ${other.uid}, not by this user (uid ${process.getuid()})`)
    }
    await conn.greet(greetingMs)
    return conn
  }

  greet(greetingMs) {
    return new Promise((resolve, reject) => {
      const onClose = () => reject(lost(`the sandbox supervisor at ${this.socketPath} closed the connection before its hello`))
      this.socket.once('close', onClose)
      const timer = setTimeout(() => {
        this.greeting = undefined
        this.socket.removeListener('close', onClose)
        this.socket.destroy()
        reject(lost(`the sandbox supervisor at ${this.socketPath} accepted the connection but did not greet within ${greetingMs} ms (is it stopped?)`))
      }, greetingMs)
      this.socket.on('error', () => {})
      this.greeting = (first) => {
        this.greeting = undefined
        clearTimeout(timer)
        this.socket.removeListener('close', onClose)
        if (first instanceof Error) {
          this.socket.destroy()
          return reject(first)
        }
        if (first.t === 'refused') {
          this.socket.destroy()
          return reject(protocol.toError({ name: 'Error', code: first.code, message: first.message }))
        }
        const why = protocol.helloMismatch(first, 'the sandbox supervisor')
        if (why) {
          this.socket.destroy()
          return reject(new errors.SandboxProtocolError(why))
        }
        this.sandbox = first.sandbox
        this.greeted = true
        this.socket.on('close', () => this.gone())
        this.idle()
        resolve()
      }
      this.socket.write(protocol.encode(protocol.hello(canShare() ? { shared: true } : undefined)))
      // A refusal can come before the hello is even sent (a socket of another user).
      if (this.early) this.read(Buffer.alloc(0))
    })
  }

  /** One read from the socket (valid during this call only). */
  read(view) {
    let messages
    try {
      messages = this.frames.push(view)
    } catch (e) {
      if (this.greeting) this.greeting(e)
      this.socket?.destroy()
      return
    }
    if (!this.greeted) {
      if (!this.greeting) {
        // Before greet() listens: kept (copied) for it.
        ;(this.early ||= []).push(...messages.map(copied))
        return
      }
      if (this.early) messages = [...this.early, ...messages]
      this.early = undefined
      if (messages.length === 0) return
      this.greeting(messages.shift())
      if (!this.greeted) return
    }
    for (const m of messages) this.dispatch(m)
    this.inbox.read()
  }

  dispatch(m) {
    if (m.t === 'out') {
      this.inbox.event(m)
    } else if (m.t === 'log') {
      this.inbox.log(m)
    } else if (m.t === 'part') {
      if (!this.pending.has(m.id)) return
      const parts = this.parts.get(m.id)
      if (parts) parts.push(m.data)
      else this.parts.set(m.id, [m.data])
    } else if (m.t === 'reply') {
      const p = this.pending.get(m.id)
      if (!p) return
      if (m.parts !== undefined) {
        const whole = protocol.joinParts(this.parts.get(m.id) || [], m.id)
        this.parts.delete(m.id)
        return this.dispatch(whole)
      }
      this.pending.delete(m.id)
      this.idle()
      if (m.error) p.reject(protocol.toError(m.error))
      else {
        const value = decodeValue(m.value)
        // Runs before the next frame is read: a handle registered here sees every event after,
        // once the caller has it (the inbox holds them until then).
        if (p.onReply) {
          if (value && value.pid !== undefined) this.inbox.hold(String(value.pid))
          p.onReply(value)
        }
        p.resolve(value)
      }
    } else if (m.t === 'refused') {
      this.refusal = m
    } else if (m.t === 'event') {
      if (m.pid !== undefined) this.inbox.event(m)
      else if (m.kind === 'ended') this.ended = m.reason
    }
  }

  gone() {
    if (this.lostError) return
    const id = this.sandbox?.id
    const why = { expired: 'its lifetime (timeoutMs) is over', stopped: 'it was stopped', terminated: 'its supervisor was terminated', replaced: 'its socket was taken by another supervisor' }
    this.lostError = this.closed
      ? lost(`this object let go of sandbox ${id} (detach() or stop()); start() attaches again`)
      : this.ended
        ? lost(`sandbox ${id} has ended: ${why[this.ended] || this.ended}; start() starts it again`)
        : this.refusal
          ? lost(`the supervisor of sandbox ${id} disconnected this Node process: ${this.refusal.message}; start() attaches again`)
          : lost(`the supervisor of sandbox ${id} (pid ${this.sandbox?.pid}) is gone; start() starts a new one`)
    for (const p of this.pending.values()) p.reject(this.lostError)
    this.pending.clear()
    this.parts.clear()
    this.inbox.gone(this.lostError)
    if (!this.closed) this.emit('lost', this.lostError)
    // Each process followed here is told through its subscriber: one listener per process on
    // the connection would pass Node's limit of 10 past ten processes.
    for (const to of [...this.subscribers.values()]) to({ kind: 'gone', error: this.lostError })
  }

  /**
   * Calls `op` on the supervisor. `onReply` runs with the value as soon as the reply is read,
   * before any later frame.
   */
  call(op, args, onReply) {
    if (this.lostError) return Promise.reject(this.lostError)
    const id = this.nextId++
    const quiet = QUIET.has(op)
    let frame
    try {
      const att = attachments()
      frame = protocol.encodeCall(id, op, encodeValue(args, att), att, quiet)
    } catch (e) {
      return Promise.reject(e)
    }
    if (quiet) {
      // Held for the next call that wants an answer, or the end of this turn.
      if (!this.socket.destroyed) protocol.batch(this.socket)
      this.write(frame)
      return Promise.resolve()
    }
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject, onReply })
      this.idle()
      this.write(frame)
      protocol.flush(this.socket)
    })
  }

  /** Writes the pieces of a frame in one system call (with quiet calls held before it). */
  write(pieces) {
    if (this.socket.destroyed) return
    this.socket.cork()
    for (const p of pieces) this.socket.write(p)
    this.socket.uncork()
  }

  /** A `logs(options)` stream of process `pid`, its events pushed by the supervisor. */
  logs(pid, options, signal) {
    if (this.lostError) return Promise.reject(this.lostError)
    return openLogs(this, pid, options, signal)
  }

  /** Keeps Node alive until the returned function is called (a `wait()` in progress). */
  hold() {
    this.holds++
    this.idle()
    let done = false
    return () => {
      if (done) return
      done = true
      this.holds--
      this.idle()
    }
  }

  idle() {
    if (this.socket.destroyed) return
    if (this.pending.size > 0 || this.holds > 0) this.socket.ref()
    else this.socket.unref()
  }

  /** Lets go of the supervisor, which runs on. */
  close() {
    this.closed = true
    this.socket.end()
    this.socket.unref()
  }
}

/**
 * The supervisor's environment: the caller's, without Node's own settings (`NODE_OPTIONS` and the
 * other `NODE_*` variables). They are meant for the caller's Node: a `--require ./preload.cjs`
 * is relative to the caller's directory, not the working directory the supervisor runs in, and
 * would kill it before it serves. The sandbox's processes get the env their spawn names, not this.
 */
function supervisorEnv(env) {
  const out = {}
  for (const [k, v] of Object.entries(env)) if (!k.startsWith('NODE_')) out[k] = v
  return out
}

/**
 * Connects to the supervisor of the socket `sock`, waiting while its lock is held but no socket
 * answers (a supervisor putting back a deleted socket, or a moment from serving) until `until`.
 * Null when no supervisor holds the id, or none answered in time.
 */
async function waitForSupervisor(sock, until) {
  for (;;) {
    const conn = await Connection.open(sock)
    if (conn) return conn
    if (!lockHeld(sock) || Date.now() >= until) return null
    await new Promise((r) => setTimeout(r, 50))
  }
}

/** The supervisor already serving at `sock`, if one is there (or is putting its socket back). */
function findSupervisor(sock) {
  return waitForSupervisor(sock, Date.now() + WAIT_MS)
}

/**
 * Starts a supervisor for `config` (detached: it outlives this Node process) and connects to it.
 * A supervisor that already holds the id (another start won the race) is joined instead; the
 * connection's `startedHere` says which.
 */
async function startSupervisor(config) {
  const deadline = Date.now() + START_TIMEOUT_MS
  for (;;) {
    const first = await launch(config)
    if (first.error) throw protocol.toError(first.error)
    const conn = await waitForSupervisor(config.socketPath, Math.min(deadline, Date.now() + WAIT_MS))
    if (conn) {
      conn.startedHere = first.ready === true && conn.sandbox.pid === first.pid
      return conn
    }
    // The holder ended before it answered: the id is free, and the next launch takes it.
    if (Date.now() >= deadline) throw lost(`no sandbox supervisor for ${config.id} answers at ${config.socketPath}`)
  }
}

/**
 * How the supervisor is run. Its young generation is held to 2 MiB a half (V8's default grows
 * to 16): a flood's garbage is short-lived and small, and a supervisor lives as long as its
 * sandbox, so its resident size should stay near its idle size. Measured under 64 followed
 * log streams that a client never reads, beside a 512 MiB flood: 13-27 MiB over idle against
 * 18-50 by default; spawn until exit and floods just as fast.
 */
const SUPERVISOR_ARGS = ['--max-semi-space-size=2', SUPERVISOR]

/** Runs `node supervisor.js` for `config`; resolves with the line it prints once it serves or leaves. */
async function launch(config) {
  const logPath = logPathOf(config.socketPath)
  const log = fs.openSync(logPath, 'a', 0o600)
  let child
  try {
    // The config goes on stdin, not argv: argv is bounded (E2BIG) and readable by every user.
    child = spawn(process.execPath, SUPERVISOR_ARGS, {
      detached: true,
      stdio: ['pipe', 'pipe', log],
      cwd: config.workingDirectory,
      env: supervisorEnv(process.env),
    })
  } finally {
    fs.closeSync(log)
  }
  // A supervisor that died at once closed its end: its exit says why, not this write.
  child.stdin.on('error', () => {})
  child.stdin.end(JSON.stringify(config))
  const first = await new Promise((resolve, reject) => {
    let text = ''
    const timer = setTimeout(() => reject(new errors.ProcessError(`the sandbox supervisor did not start within ${START_TIMEOUT_MS} ms`)), START_TIMEOUT_MS)
    child.once('error', (e) => {
      clearTimeout(timer)
      reject(e)
    })
    child.stdout.on('data', (d) => {
      text += d
      const nl = text.indexOf('\n')
      if (nl < 0) return
      clearTimeout(timer)
      resolve(JSON.parse(text.slice(0, nl)))
    })
    // 'close', not 'exit': the line it printed before exiting is read first.
    child.once('close', (code, signal) => {
      clearTimeout(timer)
      reject(new errors.ProcessError(`the sandbox supervisor exited before serving (code ${code}, signal ${signal}); see ${logPath}`))
    })
  })
  child.stdout.destroy()
  child.unref()
  return first
}

module.exports = { Connection, findSupervisor, startSupervisor }
