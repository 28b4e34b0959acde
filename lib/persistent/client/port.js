'use strict'
// A process of a persistent sandbox as the faces reach it (lib/process/port.js): each call goes
// to the sandbox's supervisor, which runs it on the process's own port there. The same faces as
// in this Node process (ProcessHandle as a Mastra handle's `nativeHandle`, Terminal) are
// written over it; this is only the transport.

const { Readable } = require('node:stream')
const errors = require('../../native/errors')
const { binding } = require('../../native/native')
const { checkSignal, raceAbort, abortError } = require('../../native/util')
const { PORT } = require('../../process/port')
const { StdinQueue } = require('../../process/stdin-queue')
const { ProcessHandle } = require('../../faces/handle')
const { Terminal } = require('../../faces/terminal')

/** Bytes of input per call: well under a frame's limit, whatever a write's size. */
const INPUT_PIECE = 1024 * 1024

/** The options object a call ends with, if any (a pattern or a port comes before it). */
function optionsOf(args) {
  const last = args[args.length - 1]
  return last !== null && typeof last === 'object' && !(last instanceof RegExp) ? last : undefined
}

class SocketPort {
  /**
   * `target`: `{ pid }` of a process or `{ terminal: id }` of a terminal; `info`: what the
   * supervisor said of it (`id`, `pid`, `command`, `name`).
   */
  constructor(conn, target, info) {
    this._conn = conn
    this._target = target
    this.id = info.id
    this.pid = info.pid
    this.command = info.command
    this.name = info.name
    this._stdin = undefined
  }

  check() {
    if (this._conn.lostError) throw this._conn.lostError
  }

  hold(promise) {
    const release = this._conn.hold()
    return promise.finally(release)
  }

  /**
   * `method(...args)` on the supervisor's side. A `signal` in the options is the caller's: it
   * cannot cross, so it ends the call here as it ends a local one (`raceAbort`); the
   * supervisor's side ends by its own timeout or with the process.
   */
  _call(method, ...args) {
    const signal = optionsOf(args)?.signal
    try {
      checkSignal(signal, 'signal')
    } catch (e) {
      return Promise.reject(e)
    }
    // Checked before anything is sent: a call made and then dropped would reject later, with
    // nobody listening.
    if (signal && signal.aborted) return Promise.reject(abortError(signal))
    const t = this._target
    const call = t.terminal === undefined ? this._conn.call('view', { pid: t.pid, method, args }) : this._conn.call('terminalCall', { id: t.terminal, method, args })
    return raceAbort(call, signal)
  }

  status() {
    return this._call('status')
  }

  /** The log as a ReadableStream, pushed by the supervisor in batches as it is read. */
  async logs(options) {
    const o = options === undefined || options === null ? {} : options
    const signal = typeof o === 'object' ? o.signal : undefined
    checkSignal(signal, 'signal')
    if (signal && signal.aborted) throw abortError(signal)
    const t = this._target
    return this._conn.logs(t.terminal === undefined ? t.pid : { terminal: t.terminal }, o, signal)
  }

  output(options) {
    return this._call('output', options)
  }

  waitForExit(options) {
    return this._call('waitForExit', options)
  }

  waitForLog(pattern, options) {
    return this._call('waitForLog', pattern, options)
  }

  waitForPort(port, options) {
    return this._call('waitForPort', port, options)
  }

  stop() {
    return this._call('stop')
  }

  restart() {
    return this._call('restart')
  }

  async signal(signal) {
    // Refused here as the native rule refuses it, before anything is sent.
    binding.checkSignal(signal)
    return this._call('kill', signal)
  }

  shutdown() {
    return this._call('kill')
  }

  resize(cols, rows) {
    return this._call('resize', cols, rows)
  }

  interrupt() {
    return this._call('interrupt')
  }

  terminate() {
    return this._call('terminate')
  }

  snapshot() {
    return this._call('getSnapshot')
  }

  /** The supervisor knows the exit and answers a late write with the rule's error. */
  assertNotExited() {}

  /**
   * Its input, in call order and bounded as a local process's, sent in pieces of INPUT_PIECE,
   * each through the connection's window (input.js) before the next.
   */
  get stdin() {
    this._stdin ??= new StdinQueue(
      (bytes) => this._send(bytes),
      () => this._conn.call('closeStdin', { pid: this._target.pid }),
      () => this.pid,
    )
    return this._stdin
  }

  async _send(bytes) {
    const t = this._target
    let at = 0
    do {
      const piece = bytes.subarray(at, at + INPUT_PIECE)
      const send = t.terminal === undefined ? () => this._conn.call('stdin', { pid: t.pid, data: piece }) : () => this._conn.call('terminalCall', { id: t.terminal, method: 'write', args: [piece] })
      await this._conn.input.run(piece.length, send)
      at += piece.length
    } while (at < bytes.length)
  }

  /**
   * stdout as a Node Readable of Buffers, read from the supervisor's log from its first byte to
   * the exit (`logs({ follow: true })`). Output the bounded log no longer holds errors it with
   * ProcessOutputTruncatedError rather than be skipped.
   */
  reader(pid) {
    const port = this
    let events
    return new Readable({
      highWaterMark: 0,
      async read() {
        try {
          if (!events) events = (await port.logs({ follow: true })).getReader()
          for (;;) {
            const { value, done } = await events.read()
            if (done) return void this.push(null)
            if (value.type === 'truncated') throw new errors.ProcessOutputTruncatedError(`the reader of process ${pid} fell behind the bounded output log; output was lost`)
            if (value.type === 'stdout') return void this.push(Buffer.from(value.data))
          }
        } catch (e) {
          this.destroy(e)
        }
      },
      destroy(error, callback) {
        if (events) events.cancel().catch(() => {})
        callback(error)
      },
    })
  }
}

SocketPort.prototype[PORT] = true

/** The port of process `pid` (the pid it was spawned with) of the sandbox on `conn`. */
function processPort(conn, pid, info = {}) {
  return new SocketPort(conn, { pid: String(pid) }, { ...info, pid: String(pid) })
}

/**
 * procvisor's ProcessHandle of process `pid` of the sandbox on `conn`, for a caller that holds
 * no Mastra handle of it (the command line, the web view): the Processes API and its stdin.
 */
function processView(conn, pid, info) {
  return new ProcessHandle(processPort(conn, pid, info))
}

/** The Terminal of `info` (`{ id, pid }`), the same object for every call on one connection. */
function terminalOf(conn, info) {
  conn.terminals ??= new Map()
  let t = conn.terminals.get(info.id)
  if (!t) {
    t = new Terminal(new SocketPort(conn, { terminal: info.id }, { id: info.id, pid: info.pid }))
    conn.terminals.set(info.id, t)
  }
  return t
}

module.exports = { SocketPort, processPort, processView, terminalOf }
