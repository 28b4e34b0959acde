'use strict'
// One process as every face sees it. `ProcessCore` holds the native process and everything that
// is JS by nature: the listener pump, the finish promise, the ordered stdin queue and the byte
// reader. The faces are thin views over one core: `ProcessHandle` (the Mastra surface of
// `ProcessManager.spawn`), `Process` (the Processes API) and, in `procvisor/mastra`,
// `NativeProcessHandle` (a subclass of Mastra's own ProcessHandle).

const { Readable } = require('node:stream')
const { binding, realm } = require('./native')
const errors = require('./errors')
const { describe } = require('./util')
const { mastraExitCode, timeoutNote, checkNotExited, checkStdinData } = require('./mastra-rules')

/**
 * Listener pumps are drained from setImmediate, never inside the threadsafe-function callback:
 * Node runs up to 1,000 queued callbacks per wake-up, so draining there let a fast producer hold
 * the event loop for seconds. Here every core with new output is drained in turn, within a
 * budget per turn; the rest waits for the next turn (the native side holds the producer back).
 */
const DRAIN_BUDGET_MS = 4
const dirty = new Set()
let drainScheduled = false

function scheduleDrain(core) {
  dirty.add(core)
  if (!drainScheduled) {
    drainScheduled = true
    setImmediate(drainDirty)
  }
}

function drainDirty() {
  drainScheduled = false
  const end = performance.now() + DRAIN_BUDGET_MS
  for (const c of dirty) {
    dirty.delete(c)
    c.drain()
    if (performance.now() > end) break
  }
  if (dirty.size > 0 && !drainScheduled) {
    drainScheduled = true
    setImmediate(drainDirty)
  }
}

const NO_LISTENERS = Object.freeze([])

/** Checks `onStdout` / `onStderr` of `o` (functions or absent) and returns them as [stream, fn]. */
function listenersOf(o) {
  // Most calls give neither listener: one shared empty answer, nothing allocated.
  if (o === undefined || o === null || (o.onStdout === undefined && o.onStderr === undefined)) return NO_LISTENERS
  const out = []
  for (const [i, key] of [[0, 'onStdout'], [1, 'onStderr']]) {
    const fn = o && o[key]
    if (fn === undefined || fn === null) continue
    if (typeof fn !== 'function') throw errors.invalidOption(`${key} must be a function, got ${describe(fn)}`)
    out.push([i, fn])
  }
  return out
}

class ProcessCore {
  constructor(native, meta) {
    this.native = native
    this.command = meta.command
    this.manager = meta.manager
    this._argv = undefined
    this._id = undefined
    this._pid = undefined
    /** The producer is held at the start of stdout until the caller had its turn (see launch). */
    this.graceHold = false
    this.readerMade = false
    /** Listeners of stdout and stderr (two Sets), made by the first `addListeners`. */
    this.listeners = undefined
    this.pumping = false
    this.ended = false
    this.finishing = undefined
    /** The last stdin operation queued (see `stdinQueue`); undefined before the first. */
    this.stdinTail = undefined
  }

  /** The id in its manager; read once (the native getter makes a new string per read). */
  get id() {
    if (this._id === undefined) this._id = this.native.id
    return this._id
  }

  // argv, cwd and timeout are read from the native side when first asked for: most processes
  // are never listed, and each read is a call across the boundary on the launch path.

  /** The argv as launched (frozen). */
  get argv() {
    if (this._argv === undefined) this._argv = Object.freeze(this.native.argv)
    return this._argv
  }

  get cwd() {
    return this.native.cwd
  }

  get timeout() {
    return this.native.timeoutMs
  }

  /** The root's pid; read once, as `id` (each read is a call across the boundary). */
  get pid() {
    if (this._pid === undefined) this._pid = this.native.pid
    return this._pid
  }

  /** Throws StaleProcessHandleError once the manager that launched it is closed. */
  check() {
    if (this.manager && this.manager._closed) {
      throw new errors.StaleProcessHandleError(`process ${this.native.id} belongs to a closed process manager`)
    }
  }

  /** Mastra's exit code once the process has finished (exited, output drained); else undefined. */
  exitCode() {
    const st = this.native.state()
    return st.finished ? mastraExitCode(st.finishedExit) : undefined
  }

  timeoutNote() {
    return timeoutNote(this.timeout)
  }

  // ---- listeners ---------------------------------------------------------------------------

  /** Adds listeners; returns what was added, for `removeListeners`. */
  addListeners(pairs) {
    if (pairs.length === 0) return pairs
    if (!this.listeners) this.listeners = [new Set(), new Set()]
    for (const [i, fn] of pairs) this.listeners[i].add(fn)
    if (pairs.length > 0) this.ensurePump()
    return pairs
  }

  removeListeners(pairs) {
    for (const [i, fn] of pairs) this.listeners[i].delete(fn)
  }

  /** The wake-up handed to the native pump. */
  wake() {
    return () => scheduleDrain(this)
  }

  ensurePump() {
    if (this.pumping || this.ended) return
    this.pumping = true
    this.native.setPump(this.wake())
  }

  /** Runs on the JS thread when the native side has new output for listeners. */
  drain() {
    if (this.pumping) this.emit(this.native.pumpDrain())
  }

  emit(chunks) {
    if (!this.listeners) return
    for (const c of chunks) {
      if (!c.text) continue
      for (const fn of [...this.listeners[c.stream]]) fn(c.text)
    }
  }

  /** Delivers the last output to listeners and stops the pump (output is complete). */
  endPump() {
    if (this.ended) return
    this.ended = true
    if (this.pumping) this.emit(this.native.pumpFinish())
    this.pumping = false
  }

  /**
   * Resolves with the Mastra end (`{ code, signal, timedOut, afterMs }`) once finished, after the
   * last output reached the listeners.
   */
  finish() {
    if (!this.finishing) {
      this.finishing = this.native.waitFinish().then((end) => {
        this.endPump()
        return end
      })
    }
    return this.finishing
  }

  // ---- stdin -------------------------------------------------------------------------------

  /**
   * Runs stdin operations one after another, in call order. Each native call is a task of its
   * own on the runtime, so calls made without awaiting (`sendStdin(a); sendStdin(b);
   * closeStdin()`) could otherwise reach the pipe in any order, and the EOF overtake the writes.
   */
  stdinQueue(op) {
    const run = this.stdinTail ? this.stdinTail.then(op) : Promise.resolve().then(op)
    this.stdinTail = run.then(
      () => {},
      () => {},
    )
    return run
  }

  /** Mastra's rule: after exit, stdin calls reject with the exit code the face reports. */
  assertNotExited(pid) {
    checkNotExited(pid, this.exitCode())
  }

  write(data) {
    checkStdinData(data)
    // A copy: the caller may reuse its buffer as soon as this returns.
    const buf = typeof data === 'string' ? Buffer.from(data, 'utf8') : Buffer.from(data)
    return this.stdinQueue(() => this.native.writeStdin(buf))
  }

  closeStdin() {
    return this.stdinQueue(() => this.native.closeStdin())
  }

  // ---- reader ------------------------------------------------------------------------------

  /**
   * stdout as a byte stream, replaying from the start. It holds the producer back (like the
   * listener pump) from its position, so a protocol reader (JSON-RPC, LSP) never loses bytes: a
   * reader that stops reading slows the child down instead, as a paused `child_process` stream
   * does.
   */
  reader(pid) {
    const native = this.native
    this.readerMade = true
    let after = 0
    let takenThisTurn = 0
    const nextTurn = () => new Promise((resolve) => setImmediate(() => {
      takenThisTurn = 0
      resolve()
    }))
    // The native side wakes the reader on this thread (new output, a pipe to read on this
    // loop, the process's end); a wait is a promise resolved by that wake-up, not a task on
    // the runtime.
    const waits = { resolve: null }
    const wakeUp = () => new Promise((resolve) => {
      waits.resolve = resolve
      waitingReaders.add(waits)
    })
    let waking = false
    let reading = false
    let held = true
    native.setReaderHold(0)
    const release = () => {
      if (held) {
        held = false
        waitingReaders.delete(waits)
        if (waking) native.setReaderWake(null)
        native.setReaderHold(null)
        abandonedReaders.unregister(stream)
      }
    }
    // One Buffer queued at a time: with the default high-water mark the stream queued several
    // takes while its consumer waited, and `read()` then joined them (`fromList` copied 175 ms of
    // a 1 GiB flood). A take already joins whatever the log holds, so nothing is gained by queueing.
    const stream = new Readable({
      highWaterMark: 0,
      read() {
        if (reading) return
        reading = true
        ;(async () => {
          try {
            // Installed at the first read, not with the stream: until then nothing native holds
            // the stream, so a reader that is never read can still be collected (and its hold
            // released by the registry below).
            if (!waking && held) {
              waking = true
              native.setReaderWake(wakerOf(new WeakRef(waits)))
            }
            for (;;) {
              // Taken at once, a flood would never let the event loop turn: past a share per
              // turn, the next take waits for the loop's next turn.
              if (takenThisTurn >= TAKE_PER_TURN) await nextTurn()
              const read = native.takeStdout(after, 256 * 1024)
              if (read.truncated) {
                throw new errors.ProcessOutputTruncatedError(`the reader of process ${pid} fell behind the bounded output log; output was lost`)
              }
              if (read.next === after) {
                // Nothing after `after`: stdout is complete once the process had finished
                // before the take; otherwise wait to be woken.
                if (read.finished) {
                  release()
                  return stream.push(null)
                }
                await wakeUp()
                takenThisTurn = 0
                continue
              }
              after = read.next
              if (held) native.setReaderHold(after)
              if (read.data) {
                takenThisTurn += read.data.length
                if (!stream.push(read.data)) return
              }
            }
          } catch (e) {
            release()
            stream.destroy(e)
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
}

/** Bytes a reader takes from the log within one turn of the event loop (see `reader`). */
const TAKE_PER_TURN = 2 * 1024 * 1024

/**
 * Ends the hold a launch put at the start of stdout, unless a reader took it over. Until then the
 * child could fill the bounded log and block, no further.
 */
function endGraceHold(core) {
  if (!core.graceHold) return
  core.graceHold = false
  if (!core.readerMade) core.native.setReaderHold(null)
}

/**
 * Cores launched since the last check phase, whose grace holds end at the next one: one
 * Immediate for all the launches that settle within a turn (16 in flight settle many per turn),
 * not one each.
 */
let graceHolds = []

function endGraceHolds() {
  const cores = graceHolds
  graceHolds = []
  for (const core of cores) endGraceHold(core)
}

function holdUntilNextTurn(core) {
  core.graceHold = true
  if (graceHolds.push(core) === 1) setImmediate(endGraceHolds)
}

/**
 * Releases the producer hold (and the wake-up) of a reader that was dropped without being ended
 * or destroyed.
 */
const abandonedReaders = new FinalizationRegistry((native) => {
  native.setReaderWake(null)
  native.setReaderHold(null)
})

/**
 * Readers waiting for their wake-up. The native wake-up reaches a reader only through a WeakRef,
 * so it holds no reader alive; this set does while one waits, as a pending native call would.
 * A paused reader is not held: dropped, it is collected and its hold released.
 */
const waitingReaders = new Set()

/** A reader's wake-up, made outside its scope so that it holds nothing of the reader but `ref`. */
function wakerOf(ref) {
  return () => {
    const waits = ref.deref()
    if (!waits || !waits.resolve) return
    const resolve = waits.resolve
    waits.resolve = null
    waitingReaders.delete(waits)
    resolve()
  }
}

/** How deep the native conversion follows a request's fields (its `DEPTH` less the request). */
const FIELD_DEPTH = 3

/**
 * The request as JSON text where JSON carries exactly what the native conversion would read
 * from the object (plain objects and arrays, finite numbers, well-formed strings, booleans, null;
 * no `undefined` below the request's own fields; no deeper than the conversion follows), else
 * the object itself. One string crosses into native code instead of a walk of the object one
 * napi call at a time: measured per launch on the JS thread, one at a time, about 5 µs (this
 * check and `JSON.stringify`) against 15-17 µs for the walk.
 */
function wire(request) {
  for (const k in request) {
    const v = request[k]
    if (v !== undefined && !faithful(v, FIELD_DEPTH)) return request
  }
  return JSON.stringify(request)
}

function faithful(v, depth) {
  switch (typeof v) {
    case 'string':
      return v.isWellFormed()
    case 'number':
      return Number.isFinite(v)
    case 'boolean':
      return true
    case 'object': {
      if (v === null) return true
      if (Array.isArray(v)) {
        if (Object.getPrototypeOf(v) !== Array.prototype || (v.length > 0 && depth === 0)) return false
        for (let i = 0; i < v.length; i++) if (!(i in v) || !faithful(v[i], depth - 1)) return false
        return true
      }
      const proto = Object.getPrototypeOf(v)
      if (proto !== Object.prototype && proto !== null) return false
      for (const k in v) {
        // An inherited enumerable key (a polluted prototype) is read natively, not by JSON.
        if (depth === 0 || !Object.hasOwn(v, k) || !faithful(v[k], depth - 1)) return false
      }
      return true
    }
    default:
      // undefined (JSON drops it), functions, symbols, bigints: the object goes as it is.
      return false
  }
}

/**
 * Launches a native process and wraps it in a core. `face` is 'shell' (the Mastra surface) or
 * 'argv' (the Processes API); `request` is `{ command, options, env: [layers], cwd }` as the user
 * gave them, and the native side reads their meaning. `listeners` (`[stream, fn]` pairs) are
 * installed before the first byte, so they miss nothing; their first delivery waits for the
 * caller to have its handle (Mastra: the handle resolves before any output callback).
 *
 * `holdForReader`: the handle has a `reader` that replays stdout from its first byte. The
 * producer is held at that first byte from the start, until the caller has had its turn with the
 * handle (the continuation of its `await`, a check phase later): a reader made then gets every
 * byte. Without the hold a fast child (1 GB/s) overran the bounded log in the moment between the
 * launch and the caller's `handle.reader`, and that reader failed as truncated.
 */
function launch(face, request, meta, listeners = [], holdForReader = false) {
  let core
  const wake = listeners.length > 0 ? () => core && scheduleDrain(core) : undefined
  let launched
  try {
    launched = binding.spawnProcess(face, wire(request), realm, wake, holdForReader)
  } catch (e) {
    // A request the conversion refuses rejects, as every other launch error does.
    return Promise.reject(e)
  }
  // One reaction, not an `async` function: each `await` on the launch's path is a promise and
  // a microtask of the JS thread's, between the child's exec and the caller's continuation.
  return launched.then((native) => {
    core = new ProcessCore(native, meta)
    if (holdForReader) holdUntilNextTurn(core)
    if (wake) {
      core.pumping = true
      core.addListeners(listeners)
      scheduleDrain(core)
    }
    return core
  })
}

module.exports = { ProcessCore, launch, listenersOf }
