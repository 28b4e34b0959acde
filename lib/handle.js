'use strict'
// The Mastra face of one native process: `ProcessHandle`, exactly as Mastra's
// SandboxProcessManager hands it out (string pid, `exitCode` undefined while running, retained
// text, listeners, idempotent wait, kill, stdin, reader/writer), plus the seed-002 readiness and
// log methods, because both are views of the same process.

const { Readable, Writable } = require('node:stream')
const { StringDecoder } = require('node:string_decoder')
const errors = require('./errors')
const observe = require('./observe')
const { ProcessView } = require('./view')
const { checkSignal, describe } = require('./util')

/** Mastra's exit codes: 124 on timeout, 128 when killed by a signal, else the process's own. */
function mastraExitCode(exit) {
  if (exit.timedOut) return 124
  if (exit.signal !== undefined && exit.signal !== null) return 128
  return exit.code
}

/** Mastra's ProcessInfo of a handle (ours or a Mastra subclass): `exitCode` only once exited. */
function processInfo(h) {
  const exitCode = h.exitCode
  const info = { pid: h.pid, command: h.command, running: exitCode === undefined }
  if (exitCode !== undefined) info.exitCode = exitCode
  return info
}

function addListeners(sets, o) {
  const added = []
  for (const [i, key] of [[0, 'onStdout'], [1, 'onStderr']]) {
    const fn = o && o[key]
    if (fn === undefined || fn === null) continue
    if (typeof fn !== 'function') throw errors.invalidOption(`${key} must be a function, got ${describe(fn)}`)
    sets[i].add(fn)
    added.push([i, fn])
  }
  return added
}

/**
 * Listener pumps are drained from setImmediate, never inside the threadsafe-function callback:
 * Node runs up to 1,000 queued callbacks per wake-up, so draining there let a fast producer hold
 * the event loop for seconds. Here every handle with new output is drained in turn, within a
 * budget per turn; the rest waits for the next turn (the native side holds the producer back).
 */
const DRAIN_BUDGET_MS = 4
const dirty = new Set()
let drainScheduled = false

function scheduleDrain(handle) {
  dirty.add(handle)
  if (!drainScheduled) {
    drainScheduled = true
    setImmediate(drainDirty)
  }
}

function drainDirty() {
  drainScheduled = false
  const end = performance.now() + DRAIN_BUDGET_MS
  for (const h of dirty) {
    dirty.delete(h)
    h._drain()
    if (performance.now() > end) break
  }
  if (dirty.size > 0 && !drainScheduled) {
    drainScheduled = true
    setImmediate(drainDirty)
  }
}

class ProcessHandle extends ProcessView {
  /** @internal */
  constructor(native, init) {
    super()
    if (!native || typeof native.state !== 'function' || !init) {
      throw errors.invalidOption('ProcessHandle is created by ProcessManager.spawn(), not by new')
    }
    this._native = native
    this._manager = init.manager
    this._argv = init.argv
    this._cwd = init.cwd
    this._timeout = init.timeout
    this._listeners = [new Set(), new Set()]
    // StringDecoder: the same incremental semantics as TextDecoder({stream}), 5-6× faster here.
    this._decoders = [new StringDecoder('utf8'), new StringDecoder('utf8')]
    this._pumping = false
    this._ended = false
    this._result = undefined
    this._finishing = undefined
    this._reader = undefined
    this._writer = undefined
    this._stdinTail = Promise.resolve()
    /** The command as given to spawn (Mastra sets it after spawn; writable). */
    this.command = init.command
    addListeners(this._listeners, init)
  }

  /** The OS process id, as a string (Mastra's type). */
  get pid() {
    return String(this._native.pid)
  }

  /** The id of this process in the seed-002 API (`getProcess(id)`, cursors). */
  get id() {
    return this._native.id
  }

  /** The exit code once the process has exited and its output is drained; `undefined` before. */
  get exitCode() {
    const st = this._native.state()
    return st.finished ? mastraExitCode(st.exit) : undefined
  }

  get stdout() {
    return this._native.retained('stdout').text
  }

  get stderr() {
    const text = this._native.retained('stderr').text
    const st = this._native.state()
    if (st.finished && st.exit.timedOut) return `${text}\nProcess timed out after ${this._timeout}ms`
    return text
  }

  get stdoutTruncated() {
    return this._native.retained('stdout').droppedBytes > 0
  }

  get stderrTruncated() {
    return this._native.retained('stderr').droppedBytes > 0
  }

  get stdoutDroppedBytes() {
    return this._native.retained('stdout').droppedBytes
  }

  get stderrDroppedBytes() {
    return this._native.retained('stderr').droppedBytes
  }

  // ---- listener pump -------------------------------------------------------------------------

  /** @internal Runs on the JS thread when the native side has new output for listeners. */
  _drain() {
    if (!this._pumping) return
    const batch = this._native.pumpDrain()
    for (const c of batch.chunks) this._emit(c.stream, this._decoders[c.stream].write(c.data))
  }

  _emit(i, text) {
    if (!text) return
    for (const fn of [...this._listeners[i]]) fn(text)
  }

  _ensurePump() {
    if (this._pumping || this._ended) return
    this._pumping = true
    this._native.setPump(() => scheduleDrain(this))
  }

  /** Delivers the last output to listeners and stops the pump (output is complete). */
  _endPump() {
    if (this._ended) return
    this._drain()
    this._ended = true
    for (const i of [0, 1]) this._emit(i, this._decoders[i].end())
    if (this._pumping) this._native.clearPump()
    this._pumping = false
  }

  _finish() {
    if (!this._finishing) {
      this._finishing = this._native.waitFinished().then((st) => {
        this._endPump()
        return st
      })
    }
    return this._finishing
  }

  // ---- Mastra API ----------------------------------------------------------------------------

  /**
   * Waits for the process to exit and its output to drain; the same result every call.
   * Listeners given here receive output until this wait settles. An abort kills the process.
   */
  async wait(options) {
    const o = options === undefined || options === null ? {} : options
    if (typeof o !== 'object') throw errors.invalidOption(`wait options must be an object, got ${describe(o)}`)
    checkSignal(o.abortSignal, 'abortSignal')
    const added = addListeners(this._listeners, o)
    if (added.length > 0) this._ensurePump()
    const signal = o.abortSignal
    let onAbort
    try {
      if (signal) {
        if (signal.aborted) await this.kill()
        else {
          onAbort = () => {
            this.kill()
          }
          signal.addEventListener('abort', onAbort, { once: true })
        }
      }
      const st = await this._finish()
      return this._resultOf(st)
    } finally {
      if (onAbort) signal.removeEventListener('abort', onAbort)
      for (const [i, fn] of added) this._listeners[i].delete(fn)
    }
  }

  _resultOf(st) {
    if (this._result) return { ...this._result }
    const exitCode = mastraExitCode(st.exit)
    const out = this._native.retained('stdout')
    const err = this._native.retained('stderr')
    const result = {
      success: exitCode === 0,
      exitCode,
      stdout: out.text,
      stderr: st.exit.timedOut ? `${err.text}\nProcess timed out after ${this._timeout}ms` : err.text,
      executionTimeMs: st.finishedAfterMs,
    }
    if (st.exit.timedOut) result.timedOut = true
    // Mastra reports a timeout as killed too (its timeout is a kill).
    if (exitCode === 128 || st.exit.timedOut) result.killed = true
    if (out.droppedBytes > 0) {
      result.stdoutTruncated = true
      result.stdoutDroppedBytes = out.droppedBytes
    }
    if (err.droppedBytes > 0) {
      result.stderrTruncated = true
      result.stderrDroppedBytes = err.droppedBytes
    }
    this._result = result
    return { ...result }
  }

  /**
   * SIGKILL to the whole process group. `false` if the process had already exited; otherwise
   * `true`, without waiting for the exit. With a numeric `signal` (1–64), sends that instead.
   */
  async kill(signal) {
    // A bad signal is refused whether or not the process is still running.
    if (signal !== undefined) observe.checkKillSignal(signal)
    if (this.exitCode !== undefined) return false
    if (signal === undefined) {
      const sent = this._native.signal(9, true)
      return sent || this.exitCode === undefined
    }
    await observe.kill(this._native, signal)
    return true
  }

  _stdinCheck() {
    const code = this.exitCode
    if (code !== undefined) throw new errors.ProcessAlreadyExitedError(`Process ${this.pid} has already exited with code ${code}`)
  }

  /**
   * Runs stdin operations one after another, in call order. Each native call is a task of its
   * own on the runtime, so calls made without awaiting (`sendStdin(a); sendStdin(b);
   * closeStdin()`) could otherwise reach the pipe in any order, and the EOF overtake the writes.
   */
  _stdinQueue(op) {
    const run = this._stdinTail.then(() => errors.call(op)).catch((e) => {
      // The process died while the write was queued: report Mastra's exit code (124/128), not
      // the raw one the native side saw.
      const exit = this._native.state().exit
      if (e instanceof errors.ProcessAlreadyExitedError && exit) {
        throw new errors.ProcessAlreadyExitedError(`Process ${this.pid} has already exited with code ${mastraExitCode(exit)}`)
      }
      throw e
    })
    this._stdinTail = run.then(
      () => {},
      () => {},
    )
    return run
  }

  /** Writes to stdin; resolves once written. Writes (and `closeStdin`) happen in call order. */
  async sendStdin(data) {
    this._stdinCheck()
    let buf
    if (typeof data === 'string') buf = Buffer.from(data, 'utf8')
    // A copy: the caller may reuse its buffer as soon as this returns.
    else if (data instanceof Uint8Array) buf = Buffer.from(data)
    else throw errors.invalidOption(`sendStdin data must be a string or Uint8Array, got ${describe(data)}`)
    await this._stdinQueue(() => this._native.writeStdin(buf))
  }

  /** Sends EOF on stdin after the writes made before it. Idempotent; rejects after exit or when stdin was ignored. */
  async closeStdin() {
    this._stdinCheck()
    await this._stdinQueue(() => this._native.closeStdin())
  }

  /** stdout as a Node Readable (created on first use; replays retained output, ends at exit). */
  get reader() {
    if (!this._reader) this._reader = makeReader(this)
    return this._reader
  }

  /** stdin as a Node Writable; `end()` closes stdin. */
  get writer() {
    if (!this._writer) {
      this._writer = new Writable({
        write: (chunk, _enc, cb) => {
          this.sendStdin(chunk).then(() => cb(), cb)
        },
        final: (cb) => {
          this.closeStdin().then(() => cb(), cb)
        },
      })
    }
    return this._writer
  }
}

/** Releases the producer hold of a reader that was dropped without being ended or destroyed. */
const abandonedReaders = new FinalizationRegistry((native) => native.setReaderHold(null))

/**
 * stdout as a byte stream. It holds the producer back (like the listener pump) from its current
 * position, so a protocol reader (JSON-RPC, LSP) never loses bytes: a reader that stops reading
 * slows the child down instead, as a paused `child_process` stream does.
 */
function makeReader(handle) {
  const native = handle._native
  let after = 0
  let reading = false
  let held = true
  native.setReaderHold(0)
  const release = () => {
    if (held) {
      held = false
      native.setReaderHold(null)
      abandonedReaders.unregister(stream)
    }
  }
  const stream = new Readable({
    read() {
      if (reading) return
      reading = true
      ;(async () => {
        try {
          for (;;) {
            const read = await native.readLog(after, 256 * 1024, 1000)
            if (read.truncated) {
              throw new errors.ProcessOutputTruncatedError(`the reader of process ${handle.pid} fell behind the bounded output log; output was lost`)
            }
            let more = true
            for (const e of read.events) if (e.kind === 'stdout' && e.data.length > 0) more = stream.push(e.data)
            after = read.next
            if (held) native.setReaderHold(after)
            if (read.events.length === 0 && native.state().finished) {
              const rest = await native.readLog(after, 256 * 1024, undefined)
              if (rest.events.length > 0) continue
              release()
              return stream.push(null)
            }
            if (!more) return
          }
        } catch (e) {
          release()
          stream.destroy(errors.fromNative(e))
        } finally {
          reading = false
        }
      })()
    },
    destroy(err, cb) {
      release()
      cb(err)
    },
  })
  abandonedReaders.register(stream, native, stream)
  return stream
}

module.exports = { ProcessHandle, mastraExitCode, processInfo, scheduleDrain }
