'use strict'
// The processes of a persistent sandbox as this Node process sees them: procvisor's API of each
// (a NativeProcessHandle's `nativeHandle`), whose every call goes to the sandbox's supervisor.

const { Readable } = require('node:stream')
const errors = require('../../native/errors')
const { checkSignal, describe, stdinWriter } = require('../../native/util')
const { binding } = require('../../native/native')
const { listenersOf } = require('../../process/core')
const { handleResult } = require('../../process/mastra-rules')
const { traceMethods } = require('../../native/trace')
const { inputSize, checkBacklog } = require('./input')

/** Bytes of stdin per call: well under a frame's limit, whatever a write's size. */
const STDIN_PIECE = 1024 * 1024

/**
 * A call to the supervisor of `method(...args)` (made by `send`) that an `abortSignal` in its last
 * argument aborts here; the supervisor's side ends by its own timeout or with the process.
 */
function abortable(method, args, send) {
  const options = args[args.length - 1]
  const signal = options && typeof options === 'object' && !(options instanceof RegExp) ? options.signal : undefined
  if (signal !== undefined) checkSignal(signal, 'signal')
  // Checked before anything is sent: a call made and then dropped would reject later, with
  // nobody listening, and end this Node process.
  if (signal && signal.aborted) return Promise.reject(new errors.ProcessAbortedError(`${method} was aborted`))
  const call = send()
  if (!signal) return call
  return new Promise((resolve, reject) => {
    const onAbort = () => reject(new errors.ProcessAbortedError(`${method} was aborted`))
    signal.addEventListener('abort', onAbort, { once: true })
    call.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort))
  })
}

/**
 * procvisor's ProcessHandle of one remote process (`handle.nativeHandle`): the same members as a
 * local process's, the Processes API methods answered by the supervisor, so cursors from any
 * Node process attached to the sandbox resume in any other. An `abortSignal` aborts the wait
 * here; the supervisor's wait ends by its own timeout or with the process. The exit code, the
 * retained text and `wait()` are those of the Mastra handle it belongs to (its owner), which the
 * supervisor's events feed, as a local process's view reports its Mastra handle's.
 */
class RemoteProcessView {
  /** `info`: the supervisor's `id` and `command` of the process. */
  constructor(conn, pid, info = {}) {
    this._conn = conn
    this._pid = String(pid)
    this._id = info.id
    /** The command string (writable, as on a local handle). */
    this.command = info.command
    this._owner = undefined
    this._reader = undefined
    this._writer = undefined
    /** Settles when the writes and EOF asked for so far are done: they go in call order. */
    this._stdinDone = Promise.resolve()
    /** Bytes of the writes asked for and not yet done. */
    this._stdinQueued = 0
  }

  get pid() {
    return this._pid
  }

  /** The id of the process in the supervisor's Processes API (log cursors name it). */
  get id() {
    return this._id
  }

  /** @internal The Mastra handle this view belongs to. */
  _own(handle) {
    this._owner = handle
  }

  get exitCode() {
    return this._owner?.exitCode
  }

  get stdout() {
    return this._owner ? this._owner.stdout : ''
  }

  get stderr() {
    return this._owner ? this._owner.stderr : ''
  }

  get stdoutTruncated() {
    return this.stdoutDroppedBytes > 0
  }

  get stderrTruncated() {
    return this.stderrDroppedBytes > 0
  }

  get stdoutDroppedBytes() {
    return this._owner ? this._owner.stdoutDroppedBytes : 0
  }

  get stderrDroppedBytes() {
    return this._owner ? this._owner.stderrDroppedBytes : 0
  }

  /**
   * Waits for the exit and the last output (the owner's wait, which holds the connection);
   * listeners given here get output until it settles, an abort kills the process.
   */
  async wait(options) {
    const o = options === undefined || options === null ? {} : options
    if (typeof o !== 'object') throw errors.invalidOption(`wait options must be an object, got ${describe(o)}`)
    checkSignal(o.abortSignal, 'abortSignal')
    const listeners = listenersOf(o)
    const owner = this._owner
    await owner.wait({
      onStdout: listeners.find(([i]) => i === 0)?.[1],
      onStderr: listeners.find(([i]) => i === 1)?.[1],
      abortSignal: o.abortSignal,
    })
    return handleResult(owner._end, owner)
  }

  /**
   * stdout as a Node Readable of Buffers, read from the supervisor's log from its first byte to
   * the exit (`logs({ follow: true })`). Output the bounded log no longer holds errors it with
   * ProcessOutputTruncatedError rather than be skipped.
   */
  get reader() {
    if (!this._reader) {
      const view = this
      let events
      this._reader = new Readable({
        highWaterMark: 0,
        async read() {
          try {
            if (!events) events = (await view.logs({ follow: true })).getReader()
            for (;;) {
              const { value, done } = await events.read()
              if (done) return void this.push(null)
              if (value.type === 'truncated') throw new errors.ProcessOutputTruncatedError(`the reader of process ${view._pid} fell behind the bounded output log; output was lost`)
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
    return this._reader
  }

  /** stdin as a Node Writable; `end()` closes stdin. */
  get writer() {
    if (!this._writer) {
      this._writer = stdinWriter(this)
    }
    return this._writer
  }

  _call(method, ...args) {
    return abortable(method, args, () => this._conn.call('view', { pid: this._pid, method, args }))
  }

  status() {
    return this._call('status')
  }

  /**
   * The log as a ReadableStream, pushed by the supervisor in batches as it is read: the same
   * events and cursors as every other attached Node process sees.
   */
  async logs(options) {
    const o = options === undefined || options === null ? {} : options
    const signal = typeof o === 'object' ? o.signal : undefined
    if (signal !== undefined) checkSignal(signal, 'signal')
    if (signal && signal.aborted) throw new errors.ProcessAbortedError('logs was aborted')
    return this._conn.logs(this._pid, o, signal)
  }

  output(options) {
    return this._call('output', options)
  }

  waitForExit(options) {
    return this._held(this._call('waitForExit', options))
  }

  waitForLog(pattern, options) {
    return this._held(this._call('waitForLog', pattern, options))
  }

  waitForPort(port, options) {
    return this._held(this._call('waitForPort', port, options))
  }

  stop() {
    return this._held(this._call('stop'))
  }

  restart() {
    return this._held(this._call('restart'))
  }

  kill(signal) {
    if (signal === undefined) return this._call('kill')
    binding.checkSignal(signal)
    return this._call('kill', signal)
  }

  resize(cols, rows) {
    return this._call('resize', cols, rows)
  }

  /**
   * Writes to stdin in pieces of 1 MiB, each written before the next is sent. Refused, as a local
   * process's, while earlier writes not yet done hold STDIN_BACKLOG bytes.
   */
  async sendStdin(data) {
    // Before the copy: a refused write costs nothing.
    checkBacklog(this._pid, this._stdinQueued, inputSize(data))
    // A copy: what is sent is the data as it was at the call, however long the queue before it.
    const bytes = Buffer.from(data)
    this._stdinQueued += bytes.length
    try {
      return await this._stdinInOrder(async () => {
        let at = 0
        do {
          const piece = bytes.subarray(at, at + STDIN_PIECE)
          await this._conn.input.run(piece.length, () => this._conn.call('stdin', { pid: this._pid, data: piece }))
          at += piece.length
        } while (at < bytes.length)
      })
    } finally {
      this._stdinQueued -= bytes.length
    }
  }

  async closeStdin() {
    return this._stdinInOrder(() => this._conn.call('closeStdin', { pid: this._pid }))
  }

  async _stdinInOrder(task) {
    const run = this._stdinDone.then(task)
    this._stdinDone = run.catch(() => {})
    await run
  }

  _held(p) {
    const release = this._conn.hold()
    return p.finally(release)
  }
}

traceMethods(RemoteProcessView, ['wait', 'status', 'logs', 'output', 'waitForExit', 'waitForLog', 'waitForPort', 'stop', 'restart', 'kill', 'resize', 'sendStdin', 'closeStdin'])

module.exports = { RemoteProcessView, abortable }
