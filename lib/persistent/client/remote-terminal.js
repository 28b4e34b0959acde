'use strict'
// A terminal of a persistent sandbox as this Node process sees it: procvisor's Terminal surface,
// every call answered by the sandbox's supervisor, which keeps the terminal, its screen and its
// output (server/terminals.js). Cursors of its output resume in any Node process attached to the sandbox.

const errors = require('../../native/errors')
const { checkSignal } = require('../../native/util')
const { binding } = require('../../native/native')
const { traceMethods } = require('../../native/trace')
const { abortable } = require('./handles')
const { connectTerminal } = require('../../faces/connect')
const { inputSize, checkBacklog } = require('./input')

/** Bytes typed per call: well under a frame's limit, whatever a write's size. */
const WRITE_PIECE = 1024 * 1024

class RemoteTerminal {
  /** @internal `info`: the supervisor's `{ id, pid }` of the terminal. */
  constructor(conn, info) {
    this._conn = conn
    this._id = info.id
    this._pid = info.pid
    /** Settles when the writes asked for so far are done: they go in call order. */
    this._writes = Promise.resolve()
    /** Bytes of the writes asked for and not yet done. */
    this._queued = 0
  }

  /** The id of this terminal in its sandbox (`sandbox.terminals.get(id)` in any Node process). */
  get id() {
    return this._id
  }

  /** The OS pid of the program on the terminal. */
  get pid() {
    return this._pid
  }

  _call(method, ...args) {
    return abortable(method, args, () => this._conn.call('terminalCall', { id: this._id, method, args }))
  }

  /** Keeps Node alive while a wait is pending, as a local wait would. */
  _held(p) {
    const release = this._conn.hold()
    return p.finally(release)
  }

  status() {
    return this._call('status')
  }

  /**
   * Types `data` (a string as UTF-8, or bytes) in pieces of 1 MiB; writes keep their order.
   * Refused, as a local terminal's, while earlier writes not yet done hold STDIN_BACKLOG bytes.
   */
  async write(data) {
    if (typeof data !== 'string' && !(data instanceof Uint8Array)) {
      throw errors.invalidOption('write takes a string or a Uint8Array')
    }
    checkBacklog(this._pid, this._queued, inputSize(data))
    // A copy: what is typed is the data as it was at the call, however long the queue before it.
    const bytes = Buffer.from(data)
    this._queued += bytes.length
    const run = this._writes.then(async () => {
      let at = 0
      do {
        const piece = bytes.subarray(at, at + WRITE_PIECE)
        await this._conn.input.run(piece.length, () => this._call('write', piece))
        at += piece.length
      } while (at < bytes.length)
    })
    this._writes = run.catch(() => {})
    try {
      await run
    } finally {
      this._queued -= bytes.length
    }
  }

  resize(cols, rows) {
    return this._call('resize', cols, rows)
  }

  /** The output as a stream of events with cursors, pushed by the supervisor as it is read. */
  async output(options) {
    const o = options === undefined || options === null ? {} : options
    const signal = typeof o === 'object' ? o.signal : undefined
    if (signal !== undefined) checkSignal(signal, 'signal')
    if (signal && signal.aborted) throw new errors.ProcessAbortedError('output was aborted')
    return this._conn.logs({ terminal: this._id }, o, signal)
  }

  waitForExit(options) {
    return this._held(this._call('waitForExit', options))
  }

  waitForLog(pattern, options) {
    return this._held(this._call('waitForLog', pattern, options))
  }

  interrupt() {
    return this._call('interrupt')
  }

  kill(signal) {
    if (signal === undefined) return this._call('kill')
    binding.checkSignal(signal)
    return this._call('kill', signal)
  }

  terminate() {
    return this._held(this._call('terminate'))
  }

  getSnapshot() {
    return this._call('getSnapshot')
  }

  /**
   * Serves this terminal over a WebSocket as `Terminal#connect` does (lib/faces/connect.js):
   * typed input through `write`, output from the supervisor's log, resumable with `since`.
   */
  async connect(ws, options) {
    if (this._conn.lostError) throw this._conn.lostError
    return this._held(connectTerminal(this, ws, options))
  }
}

traceMethods(RemoteTerminal, ['status', 'write', 'resize', 'output', 'connect', 'waitForExit', 'waitForLog', 'interrupt', 'kill', 'terminate', 'getSnapshot'])

/** The one RemoteTerminal of each terminal per connection, so `get(id)` returns the same object. */
function remoteTerminal(conn, info) {
  conn.terminals ??= new Map()
  let t = conn.terminals.get(info.id)
  if (!t) {
    t = new RemoteTerminal(conn, info)
    conn.terminals.set(info.id, t)
  }
  return t
}

module.exports = { RemoteTerminal, remoteTerminal }
