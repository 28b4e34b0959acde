'use strict'
// The Processes API's reading side, shared by `Process` and the Mastra-surface `ProcessHandle`
// (both are views of one process): status, logs, output, waitForExit, waitForLog, waitForPort,
// kill, stop.
// Observation is not control: a timeout or abort here ends the caller's wait, never the process.

const { StringDecoder } = require('node:string_decoder')
const { binding } = require('../native/native')
const errors = require('../native/errors')
const { matcherOf } = require('./pattern')
const { checkMs, checkSignal, boundedWait, raceAbort, abortError, describe, invalidOption } = {
  ...require('../native/util'),
  invalidOption: errors.invalidOption,
}

const LOG_BATCH_BYTES = 256 * 1024
const LOG_WINDOW = 64 * 1024
/** The end of stderr an "exited before" error carries, and how much of it its message quotes. */
const STDERR_TAIL_BYTES = 4096
const MESSAGE_TAIL_CHARS = 200

function iso(ms) {
  return new Date(ms).toISOString()
}

function toExit(e) {
  const exit = { code: e.code, timedOut: e.timedOut }
  if (e.signal !== undefined && e.signal !== null) exit.signal = e.signal
  return exit
}

function options(o, name) {
  if (o === undefined || o === null) return {}
  if (typeof o !== 'object') throw invalidOption(`${name} must be an object, got ${describe(o)}`)
  return o
}

/** The Processes API's ProcessStatus of a process core, field for field. */
function status(core) {
  const native = core.native
  const st = native.state()
  const base = { id: native.id, pid: native.pid, command: core.argv, cwd: core.cwd, startedAt: iso(native.startedAtMs) }
  if (core.name !== undefined) base.name = core.name
  if (native.onTerminal) base.pty = true
  addUsage(base, native)
  if (!st.done) return addProbes(addService({ state: st.backoff ? 'backoff' : 'running', ...base }, st), st)
  return addProbes(addService({ state: 'exited', ...base, endedAt: iso(st.endedAtMs), exit: toExit(st.exit) }, st), st)
}

/** The verdicts of the probes the process was launched with (`readiness`, `liveness`). */
function addProbes(out, st) {
  if (st.ready !== undefined && st.ready !== null) out.ready = st.ready
  if (st.healthy !== undefined && st.healthy !== null) out.healthy = st.healthy
  return out
}

/** A service's count, its last run's exit and, once it ended, whether it gave up. */
function addService(out, st) {
  if (st.restarts === undefined || st.restarts === null) return out
  out.restarts = st.restarts
  if (st.lastExit) out.lastExit = toExit(st.lastExit)
  if (st.done) out.gaveUp = st.gaveUp
  return out
}

/** CPU time and memory peak of the tree, where its cgroup measures them. */
function addUsage(out, native) {
  const cpu = native.cpuTimeMs
  if (cpu !== null && cpu !== undefined) out.cpuTimeMs = cpu
  const mem = native.memoryPeakBytes
  if (mem !== null && mem !== undefined) out.memoryPeakBytes = mem
  const now = native.memoryBytes
  if (now !== null && now !== undefined) out.memoryBytes = now
  return out
}

async function waitForExit(native, opts) {
  opts = options(opts, 'waitForExit options')
  const timeout = checkMs('timeout', opts.timeout)
  checkSignal(opts.signal)
  const st = await boundedWait(
    (slice) => native.waitDone(slice),
    (s) => s.done,
    {
      deadline: timeout === undefined ? undefined : Date.now() + timeout,
      signal: opts.signal,
      onTimeout: () => new errors.ProcessWaitTimeoutError(`process ${native.id} did not exit within ${timeout}ms; it keeps running`),
    },
  )
  const exit = toExit(st.exit)
  if (st.restarts !== undefined && st.restarts !== null) {
    exit.restarts = st.restarts
    exit.gaveUp = st.gaveUp
  }
  return exit
}

/**
 * The error of a wait that the process's end made impossible: it names the pid the program holds
 * and why the process ended, with the end of its stderr (which usually says why).
 */
function exitedBefore(Class, native, exit, what) {
  if (!exit) {
    const st = native.state()
    exit = st.exit || st.finishedExit || {}
  }
  const pid = native.pid
  const stderrTail = native.logTail('stderr', STDERR_TAIL_BYTES)
  let how = `exited with code ${exit.code}`
  if (exit.signal !== undefined && exit.signal !== null) {
    const name = binding.signalName(exit.signal)
    how = `was ended by signal ${exit.signal}${name ? ` (${name})` : ''}${exit.timedOut ? ' at its timeout' : ''}`
  }
  let message = `process ${pid} ${how} before ${what}`
  const excerpt = stderrTail.trim()
  if (excerpt) message += `; stderr: ${JSON.stringify(excerpt.length > MESSAGE_TAIL_CHARS ? `${excerpt.slice(0, MESSAGE_TAIL_CHARS)}…` : excerpt)}`
  const err = new Class(message)
  err.pid = pid
  err.exitCode = exit.code
  if (exit.signal !== undefined && exit.signal !== null) err.signal = exit.signal
  err.stderrTail = stderrTail
  return err
}

/** Converts one native log event into the Processes API's ProcessLogEvent. */
function logEvent(e) {
  const timestamp = iso(e.atMs)
  if (e.kind === 'stdout' || e.kind === 'stderr') {
    return { type: e.kind, cursor: e.cursor, timestamp, data: new Uint8Array(e.data.buffer, e.data.byteOffset, e.data.byteLength) }
  }
  if (e.kind === 'restart') return { type: 'restart', attempt: e.attempt, exit: toExit(e.exit), cursor: e.cursor, timestamp }
  if (e.kind === 'probe') return { type: 'probe', probe: e.probe, ok: e.ok, reason: e.reason, cursor: e.cursor, timestamp }
  return { type: 'terminal', state: 'exited', cursor: e.cursor, timestamp, exit: toExit(e.exit) }
}

/** The start position (a sequence number) for `since` / `replay`. */
function startPosition(native, opts) {
  let after = 0
  if (opts.since !== undefined) {
    if (typeof opts.since !== 'string') throw new errors.InvalidProcessCursorError(`since must be a cursor string, got ${describe(opts.since)}`)
    after = native.parseCursor(opts.since)
  }
  if (opts.replay === false) after = Math.max(after, native.lastSeq())
  return after
}

/**
 * A pull-based reader over the log: `next()` resolves with a batch of native events (possibly
 * after a `truncated` marker), or null at the end. Waits are bounded slices, so an abandoned
 * reader costs nothing after at most one slice.
 */
function logCursor(native, after, { follow, signal, deadline, onTimeout }) {
  let ended = false
  return {
    get position() {
      return after
    },
    async next() {
      if (ended) return null
      for (;;) {
        if (signal && signal.aborted) throw abortError(signal)
        let wait
        if (follow) {
          wait = 1000
          if (deadline !== undefined) {
            const left = deadline - Date.now()
            // Past the deadline only a live process times out: the log of one that is over is
            // complete and is read to its end without waiting (`timeout: 0` is "what is there").
            if (left <= 0 && !native.state().done) throw onTimeout()
            wait = Math.min(wait, Math.max(0, Math.ceil(left)))
          }
        }
        const read = await raceAbort(native.readLog(after, LOG_BATCH_BYTES, wait), signal)
        after = read.next
        if (read.events.length > 0 || read.truncated) return read
        if (read.closed || !follow) {
          ended = true
          return null
        }
      }
    },
  }
}

/**
 * Where `logs(opts)` starts and whether it follows, its options checked: what a persistent
 * sandbox's supervisor reads for a client's stream as `logs()` reads for its own.
 */
function logStart(native, opts) {
  opts = options(opts, 'logs options')
  checkSignal(opts.signal)
  for (const k of ['replay', 'follow']) {
    if (opts[k] !== undefined && typeof opts[k] !== 'boolean') throw invalidOption(`${k} must be a boolean, got ${describe(opts[k])}`)
  }
  return { after: startPosition(native, opts), follow: opts.follow === true, signal: opts.signal }
}

/** The API's events of one read of the log (a `truncated` marker first if it skipped some); `end` after the terminal one. */
function logEvents(native, read) {
  const events = []
  let end = false
  if (read.truncated) {
    events.push({ type: 'truncated', cursor: native.cursorAt(Math.max(0, read.events.length ? read.events[0].seq - 1 : read.next)), timestamp: iso(Date.now()) })
  }
  for (const e of read.events) {
    const ev = logEvent(e)
    events.push(ev)
    if (ev.type === 'terminal') end = true
  }
  return { events, end }
}

async function logs(native, opts) {
  const { after, follow, signal } = logStart(native, opts)
  const cursor = logCursor(native, after, { follow, signal })
  if (signal && signal.aborted) throw abortError(signal)
  let sawTerminal = false
  return new ReadableStream(
    {
      async pull(controller) {
        try {
          if (sawTerminal) return controller.close()
          const read = await cursor.next()
          if (!read) return controller.close()
          const batch = logEvents(native, read)
          for (const e of batch.events) controller.enqueue(e)
          if (batch.end) {
            sawTerminal = true
            controller.close()
          }
        } catch (err) {
          controller.error(err)
        }
      },
    },
    { highWaterMark: 64 },
  )
}

async function output(native, opts) {
  opts = options(opts, 'output options')
  const timeout = checkMs('timeout', opts.timeout)
  checkSignal(opts.signal)
  if (opts.encoding !== undefined && opts.encoding !== 'utf8') throw invalidOption(`encoding must be 'utf8' or omitted, got ${describe(opts.encoding)}`)
  let maxBytes = Infinity
  if (opts.maxBytes !== undefined) {
    if (typeof opts.maxBytes !== 'number' || !Number.isFinite(opts.maxBytes) || opts.maxBytes < 0) {
      throw invalidOption(`maxBytes must be a non-negative finite number, got ${describe(opts.maxBytes)}`)
    }
    maxBytes = Math.floor(opts.maxBytes)
  }
  const cursor = logCursor(native, 0, {
    follow: true,
    signal: opts.signal,
    deadline: timeout === undefined ? undefined : Date.now() + timeout,
    onTimeout: () => new errors.ProcessWaitTimeoutError(`process ${native.id} did not exit within ${timeout}ms; it keeps running`),
  })
  const parts = { stdout: [], stderr: [] }
  const sizes = { stdout: 0, stderr: 0 }
  let truncated = false
  let exit
  for (;;) {
    const read = await cursor.next()
    if (!read) break
    if (read.truncated) truncated = true
    for (const e of read.events) {
      if (e.kind === 'stdout' || e.kind === 'stderr') {
        const room = maxBytes - sizes[e.kind]
        if (room <= 0) {
          if (e.data.length > 0) truncated = true
          continue
        }
        const take = e.data.length <= room ? e.data : e.data.subarray(0, room)
        if (take.length < e.data.length) truncated = true
        parts[e.kind].push(take)
        sizes[e.kind] += take.length
      } else if (e.kind === 'exited') {
        exit = e.exit
      }
    }
    if (exit) break
  }
  if (!exit) exit = native.state().exit
  const stdout = Buffer.concat(parts.stdout)
  const stderr = Buffer.concat(parts.stderr)
  const result = {
    stdout: opts.encoding === 'utf8' ? stdout.toString('utf8') : new Uint8Array(stdout.buffer, stdout.byteOffset, stdout.byteLength),
    stderr: opts.encoding === 'utf8' ? stderr.toString('utf8') : new Uint8Array(stderr.buffer, stderr.byteOffset, stderr.byteLength),
    exitCode: exit.code,
    timedOut: exit.timedOut,
    truncated,
  }
  if (exit.signal !== undefined && exit.signal !== null) result.signal = exit.signal
  return result
}

async function waitForLog(native, pattern, opts) {
  opts = options(opts, 'waitForLog options')
  const timeout = checkMs('timeout', opts.timeout)
  checkSignal(opts.signal)
  const which = opts.stream === undefined ? 'both' : opts.stream
  if (which !== 'stdout' && which !== 'stderr' && which !== 'both') {
    throw invalidOption(`stream must be 'stdout', 'stderr' or 'both', got ${describe(which)}`)
  }
  const matcher = matcherOf(pattern)
  const cursor = logCursor(native, 0, {
    follow: true,
    signal: opts.signal,
    deadline: timeout === undefined ? undefined : Date.now() + timeout,
    onTimeout: () => new errors.ProcessWaitTimeoutError(`no output of process ${native.id} matched ${String(pattern)} within ${timeout}ms; it keeps running`),
  })
  const decoders = { stdout: new StringDecoder('utf8'), stderr: new StringDecoder('utf8') }
  const windows = { stdout: '', stderr: '' }
  for (;;) {
    const read = await cursor.next()
    if (!read) break
    for (const e of read.events) {
      if (e.kind === 'stdout' || e.kind === 'stderr') {
        if (which !== 'both' && which !== e.kind) continue
        let w = windows[e.kind] + decoders[e.kind].write(e.data)
        if (w.length > LOG_WINDOW * 2) w = w.slice(w.length - LOG_WINDOW)
        const found = matcher.find(w)
        if (found !== null) return { stream: e.kind, text: w.length > LOG_WINDOW ? w.slice(w.length - LOG_WINDOW) : w, match: found.text, cursor: e.cursor }
        // Keep a window large enough for a match that spans chunks.
        windows[e.kind] = w.length > LOG_WINDOW ? w.slice(w.length - LOG_WINDOW) : w
      } else if (e.kind === 'exited') {
        throw exitedBefore(errors.ProcessExitedBeforeLogError, native, e.exit, `its output matched ${String(pattern)}`)
      }
    }
  }
  throw exitedBefore(errors.ProcessExitedBeforeLogError, native, undefined, `its output matched ${String(pattern)}`)
}

async function waitForPort(native, port, opts) {
  opts = options(opts, 'waitForPort options')
  if (typeof port !== 'number' || !Number.isInteger(port) || port < 1 || port > 65535) {
    throw invalidOption(`port must be an integer from 1 to 65535, got ${describe(port)}`)
  }
  const mode = opts.mode === undefined ? 'tcp' : opts.mode
  if (mode !== 'tcp' && mode !== 'http') throw invalidOption(`mode must be 'tcp' or 'http', got ${describe(mode)}`)
  const path = opts.path === undefined ? '/' : opts.path
  if (typeof path !== 'string' || !path.startsWith('/') || /[\s\0]/.test(path)) throw invalidOption(`path must start with '/' and hold no whitespace, got ${describe(path)}`)
  let min = 200
  let max = 399
  if (typeof opts.status === 'number') {
    min = max = opts.status
  } else if (opts.status !== undefined) {
    if (typeof opts.status !== 'object' || opts.status === null) throw invalidOption('status must be a number or { min, max }')
    min = opts.status.min
    max = opts.status.max
  }
  for (const [n, v] of [['status.min', min], ['status.max', max]]) {
    if (!Number.isInteger(v) || v < 100 || v > 999) throw invalidOption(`${n} must be an HTTP status from 100 to 999, got ${describe(v)}`)
  }
  if (min > max) throw invalidOption(`status.min (${min}) is above status.max (${max})`)
  const interval = opts.interval === undefined ? 500 : checkMs('interval', opts.interval)
  const timeout = checkMs('timeout', opts.timeout)
  checkSignal(opts.signal)
  const signal = opts.signal
  const deadline = timeout === undefined ? undefined : Date.now() + timeout
  let last = 'not probed yet'
  for (;;) {
    if (signal && signal.aborted) throw abortError(signal)
    const st = native.state()
    if (st.done) {
      throw exitedBefore(errors.ProcessExitedBeforeReadyError, native, st.exit, `port ${port} was ready (last probe: ${last})`)
    }
    const left = deadline === undefined ? Infinity : deadline - Date.now()
    if (left <= 0) throw new errors.ProcessReadyTimeoutError(`port ${port} was not ready within ${timeout}ms (${last}); the process keeps running`)
    const limit = Math.max(1, Math.min(2000, left))
    const probe = await raceAbort(binding.probePort(port, mode === 'http' ? path : undefined, min, max, limit), signal)
    if (probe.ready) return
    last = probe.reason || 'not ready'
    const pause = Math.min(interval, deadline === undefined ? interval : Math.max(0, deadline - Date.now()))
    // Sleep, but wake early if the process ends, so "exited first" is reported promptly.
    await raceAbort(native.waitDone(Math.max(1, pause)), signal)
  }
}

/** Sends `signal` (a number or a name; the native rule reads it), SIGTERM by default. */
async function kill(native, signal) {
  native.signal(signal === undefined ? 15 : signal, false)
}

/**
 * Ends the process through its `shutdown` option (SIGKILL at once without one), as `close()`
 * does, and resolves with its exit once the whole tree is gone.
 */
async function stop(native) {
  native.shutdown()
  return waitForExit(native)
}

module.exports = { addUsage, status, waitForExit, logs, logStart, logEvent, logEvents, output, waitForLog, waitForPort, kill, stop, logCursor, iso, toExit }
