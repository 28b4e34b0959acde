'use strict'
// The processes of a persistent sandbox as this Node process sees them: procvisor's API of each
// (a NativeProcessHandle's `nativeHandle`), whose every call goes to the sandbox's supervisor.

const errors = require('../errors')
const { checkSignal } = require('../util')
const { binding } = require('../native')
const { traceMethods } = require('../trace')

/** Bytes of stdin per call: well under a frame's limit once in base64, whatever a write's size. */
const STDIN_PIECE = 1024 * 1024

/**
 * The Processes API of one remote process (`handle.nativeHandle`): the same methods as a local
 * process's, answered by the supervisor, so cursors from any Node process attached to the sandbox
 * resume in any other. An `abortSignal` aborts the wait here; the supervisor's wait ends by its
 * own timeout or with the process.
 */
class RemoteProcessView {
  constructor(conn, pid) {
    this._conn = conn
    this._pid = String(pid)
    /** Settles when the writes and EOF asked for so far are done: they go in call order. */
    this._stdinDone = Promise.resolve()
  }

  get pid() {
    return this._pid
  }

  _call(method, ...args) {
    const options = args[args.length - 1]
    const signal = options && typeof options === 'object' && !(options instanceof RegExp) ? options.signal : undefined
    if (signal !== undefined) checkSignal(signal, 'signal')
    // Checked before anything is sent: a call made and then dropped would reject later, with
    // nobody listening, and end this Node process.
    if (signal && signal.aborted) return Promise.reject(new errors.ProcessAbortedError(`${method} was aborted`))
    const call = this._conn.call('view', { pid: this._pid, method, args })
    if (!signal) return call
    return new Promise((resolve, reject) => {
      const onAbort = () => reject(new errors.ProcessAbortedError(`${method} was aborted`))
      signal.addEventListener('abort', onAbort, { once: true })
      call.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort))
    })
  }

  status() {
    return this._call('status')
  }

  /**
   * The log as a ReadableStream, read from the supervisor in batches: the same events and
   * cursors as every other attached Node process sees.
   */
  async logs(options) {
    const o = options === undefined || options === null ? {} : options
    const signal = typeof o === 'object' ? o.signal : undefined
    if (signal !== undefined) checkSignal(signal, 'signal')
    if (signal && signal.aborted) throw new errors.ProcessAbortedError('logs was aborted')
    const conn = this._conn
    const stream = await conn.call('logsOpen', { pid: this._pid, options: o })
    let open = true
    const close = () => {
      if (!open) return
      open = false
      conn.call('logsClose', { stream }).catch(() => {})
    }
    return new ReadableStream(
      {
        start(controller) {
          signal?.addEventListener('abort', () => {
            close()
            controller.error(new errors.ProcessAbortedError('logs was aborted'))
          }, { once: true })
        },
        async pull(controller) {
          try {
            const read = await conn.call('logsRead', { stream })
            for (const e of read.events) controller.enqueue(e)
            if (read.done) {
              open = false
              controller.close()
            }
          } catch (e) {
            close()
            controller.error(e)
          }
        },
        cancel: close,
      },
      { highWaterMark: 64 },
    )
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

  kill(signal) {
    if (signal === undefined) return this._call('kill')
    binding.checkSignal(signal)
    return this._call('kill', signal)
  }

  resize(cols, rows) {
    return this._call('resize', cols, rows)
  }

  /** Writes to stdin in pieces of 1 MiB, each written before the next is sent. */
  async sendStdin(data) {
    // A copy: what is sent is the data as it was at the call, however long the queue before it.
    const bytes = Buffer.from(data)
    return this._stdinInOrder(async () => {
      let at = 0
      do {
        const piece = bytes.subarray(at, at + STDIN_PIECE)
        await this._conn.call('stdin', { pid: this._pid, data: piece.toString('base64') })
        at += piece.length
      } while (at < bytes.length)
    })
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

traceMethods(RemoteProcessView, ['status', 'logs', 'output', 'waitForExit', 'waitForLog', 'waitForPort', 'kill', 'resize', 'sendStdin', 'closeStdin'])

module.exports = { RemoteProcessView }
