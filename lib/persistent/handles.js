'use strict'
// The processes of a persistent sandbox as this Node process sees them: Mastra handles and
// Processes API views whose every call goes to the sandbox's supervisor.

const errors = require('../errors')
const { checkSignal, describe } = require('../util')
const { binding } = require('../native')
const { traceMethods } = require('../trace')

/** Bytes of stdin per call: well under a frame's limit, whatever a write's size. */
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

  kill(signal) {
    if (signal !== undefined) binding.checkSignal(signal)
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
        await this._conn.call('stdin', { pid: this._pid, data: piece })
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

/**
 * Builds the Mastra handle class over Mastra's own `ProcessHandle`, whose base retains the text,
 * calls the listeners and feeds `reader` from what `emitStdout` / `emitStderr` are given.
 */
function defineRemoteHandle(ProcessHandle) {
  class RemoteProcessHandle extends ProcessHandle {
    /** @internal Created by the sandbox's process manager from the supervisor's answer. */
    constructor(options, conn, answer) {
      super(options)
      this._conn = conn
      this._pid = String(answer.pid)
      this.command = answer.command
      this.exitCode = undefined
      this._stdinMode = answer.stdinMode === 'ignore' ? 'ignore' : 'pipe'
      this._view = new RemoteProcessView(conn, this._pid)
      this._waitPromise = new Promise((resolve, reject) => {
        this._settle = resolve
        this._fail = reject
      })
      // A wait() that nobody makes must not be an unhandled rejection when the supervisor goes.
      this._waitPromise.catch(() => {})
      this._onGone = (e) => this._fail(e)
      conn.once('gone', this._onGone)
      conn.subscribers.set(this._pid, (m) => this._event(m))
      if (answer.stdout) this.emitStdout(answer.stdout)
      if (answer.stderr) this.emitStderr(answer.stderr)
      if (answer.result) this._exit(answer.result)
    }

    /** The OS pid on the sandbox's side, in decimal. */
    get pid() {
      return this._pid
    }

    /** The Processes API view of the same process, served by the supervisor. */
    get nativeHandle() {
      return this._view
    }

    _event(m) {
      if (m.kind === 'out') {
        if (m.stream === 0) this.emitStdout(m.data)
        else this.emitStderr(m.data)
      } else if (m.kind === 'exit') this._exit(m.result)
    }

    _exit(result) {
      if (this.exitCode !== undefined) return
      this.exitCode = result.exitCode
      this._conn.subscribers.delete(this._pid)
      this._conn.removeListener('gone', this._onGone)
      this._settle({ ...result, stdout: this.stdout, stderr: this.stderr })
    }

    /** Resolves once the process exited and its output arrived; rejects if the supervisor is lost first. */
    async wait() {
      if (this.exitCode !== undefined) return this._waitPromise
      const release = this._conn.hold()
      try {
        return await this._waitPromise
      } finally {
        release()
      }
    }

    /** SIGKILL to the process's tree (or a numeric signal, 1–64); `false` once it has exited. */
    async kill(signal) {
      if (signal !== undefined) binding.checkSignal(signal)
      if (this.exitCode !== undefined) return false
      return this._conn.call('kill', { pid: this._pid, signal })
    }

    async sendStdin(data) {
      this._stdinCheck()
      if (typeof data !== 'string' && !Buffer.isBuffer(data) && !(data instanceof Uint8Array)) {
        throw errors.invalidOption(`stdin data must be a string or bytes, got ${describe(data)}`)
      }
      await this._view.sendStdin(data)
    }

    async closeStdin() {
      this._stdinCheck()
      await this._view.closeStdin()
    }

    async resize(cols, rows) {
      return this._view.resize(cols, rows)
    }

    _stdinCheck() {
      if (this._conn.lostError) throw this._conn.lostError
      if (this.exitCode !== undefined) {
        throw new errors.ProcessAlreadyExitedError(`Process ${this._pid} has already exited with code ${this.exitCode}`)
      }
      if (this._stdinMode === 'ignore') throw new errors.ProcessStdinUnavailableError(`Process ${this._pid} does not have stdin available`)
    }
  }
  traceMethods(RemoteProcessHandle, ['wait', 'kill', 'sendStdin', 'closeStdin', 'resize'])
  return RemoteProcessHandle
}

traceMethods(RemoteProcessView, ['status', 'logs', 'output', 'waitForExit', 'waitForLog', 'waitForPort', 'kill', 'resize', 'sendStdin', 'closeStdin'])

module.exports = { RemoteProcessView, defineRemoteHandle }
