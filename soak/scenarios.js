'use strict'
// The soak's scenarios, shared by `npm run soak` (soak/run.js, full sizes, figures printed) and by
// the quick versions in __test__/reliability.test.js (small sizes, figures asserted). Each
// scenario runs real processes and returns plain figures; it never decides pass/fail itself.
//
// Figures come from the kernel, not from procvisor's own bookkeeping: open descriptors from
// /proc/self/fd, RSS from the kernel, our children from /proc/*/stat (ppid = this process; the
// watchdog is left out), leftovers from the process groups we started (any live member of any of
// them), plus procvisor's own `liveProcessCount()` for comparison.

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const v8 = require('node:v8')
const vm = require('node:vm')
const { ProcessManager, liveProcessCount } = require('..')
const { binding } = require('../lib/native/native')

v8.setFlagsFromString('--expose-gc')
const gc = vm.runInNewContext('gc')

const MB = 1024 * 1024
const sleep = (ms) => new Promise((r) => setTimeout(r, ms))

// ---- probes ------------------------------------------------------------------------------------

function fdCount() {
  return fs.readdirSync('/proc/self/fd').length
}

function threadCount() {
  return fs.readdirSync('/proc/self/task').length
}

function rss() {
  return process.memoryUsage.rss()
}

/** The soft RLIMIT_NOFILE of this process (Node raises it to the hard limit at startup). */
function fdLimit() {
  const m = /Max open files\s+(\d+|unlimited)/.exec(fs.readFileSync('/proc/self/limits', 'utf8'))
  return m && m[1] !== 'unlimited' ? Number(m[1]) : Infinity
}

function readStat(pid) {
  let stat
  try {
    stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8')
  } catch {
    return null
  }
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  return { state: f[0], ppid: Number(f[1]), pgrp: Number(f[2]) }
}

function isWatchdog(pid) {
  try {
    return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes("trap '' INT TERM HUP QUIT PIPE")
  } catch {
    return false
  }
}

/** Our direct children (live and zombie), the procvisor watchdog left out. */
function children() {
  let live = 0
  let zombies = 0
  for (const d of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue
    const s = readStat(d)
    if (!s || s.ppid !== process.pid || isWatchdog(d)) continue
    if (s.state === 'Z') zombies++
    else live++
  }
  return { live, zombies }
}

/** Live (non-zombie) processes in any of the process groups `pgids`, wherever they were reparented. */
function leftovers(pgids) {
  let n = 0
  for (const d of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue
    const s = readStat(d)
    if (s && pgids.has(s.pgrp) && s.state !== 'Z' && s.state !== 'X') n++
  }
  return n
}

function snapshot() {
  const c = children()
  const m = process.memoryUsage()
  const heapMB = +(m.heapUsed / MB).toFixed(1)
  const heapTotalMB = +(m.heapTotal / MB).toFixed(1)
  return { fds: fdCount(), rssMB: +(m.rss / MB).toFixed(1), heapMB, heapTotalMB, threads: threadCount(), children: c.live, zombies: c.zombies, live: liveProcessCount() }
}

/**
 * Collects garbage and waits (up to `ms`) for procvisor's and the kernel's counts to reach zero.
 * Emptied cgroups kept for reuse are removed too: a bounded cache (four descriptors each), whose
 * size depends on how launches overlapped, not a leak.
 */
async function settle(ms = 3000) {
  const end = Date.now() + ms
  for (;;) {
    gc()
    await sleep(20)
    const c = children()
    if ((liveProcessCount() === 0 && c.live === 0 && c.zombies === 0) || Date.now() > end) break
  }
  binding.trimCgroups()
  gc()
  await sleep(20)
  gc()
}

/** Samples RSS every 10 ms until stopped; returns the peak. */
function rssSampler() {
  let peak = rss()
  const t = setInterval(() => (peak = Math.max(peak, rss())), 10)
  return {
    stop() {
      clearInterval(t)
      return Math.max(peak, rss())
    },
  }
}

/** Resolves with `p`, or rejects if it takes longer than `ms` (a hang is a failure, not a wait). */
function within(ms, p, what) {
  let t
  return Promise.race([p, new Promise((_, rej) => (t = setTimeout(() => rej(new Error(`hung: ${what} took over ${ms}ms`)), ms)))]).finally(() => clearTimeout(t))
}

async function lanes(n, width, fn) {
  let next = 0
  const run = async () => {
    while (next < n) await fn(next++)
  }
  await Promise.all(Array.from({ length: Math.min(width, n) }, run))
}

// ---- 1. spawn / wait cycles ----------------------------------------------------------------------

/**
 * `n` spawn→wait cycles, alternating the two faces: Mastra `spawn('exit 0')` (a shell, stdin a
 * pipe) + `wait()` + `release()`, and the Processes API's `exec(['true'])` + `waitForExit()`.
 */
async function cycles(n, { width = 4 } = {}) {
  const pm = new ProcessManager({ workingDirectory: os.tmpdir() })
  await (await pm.spawn('exit 0')).wait() // warm up: runtime, watchdog, first allocations
  await settle()
  const before = snapshot()
  const pgids = new Set()
  let bad = 0
  let mid
  const t0 = process.hrtime.bigint()
  const cycle = async (i) => {
    if (i % 2 === 0) {
      const h = await pm.spawn('exit 0')
      pgids.add(Number(h.pid))
      const r = await h.wait()
      if (r.exitCode !== 0) bad++
      pm.release(h.pid)
    } else {
      const p = await pm.exec(['true'])
      pgids.add(p.pid)
      const e = await p.waitForExit()
      if (e.code !== 0) bad++
    }
  }
  // In two halves, with a snapshot between: a leak grows in both, a warm-up only in the first.
  const half = Math.floor(n / 2)
  await lanes(half, width, cycle)
  await settle()
  mid = snapshot()
  await lanes(n - half, width, (i) => cycle(half + i))
  const seconds = Number(process.hrtime.bigint() - t0) / 1e9
  await pm.close()
  await settle()
  return { n, seconds, perSec: n / seconds, badExits: bad, before, mid, after: snapshot(), leftovers: leftovers(pgids) }
}

/** Handles that a program keeps (Mastra's list() keeps them all) must not keep descriptors open. */
async function keptHandles(n) {
  const pm = new ProcessManager({ workingDirectory: os.tmpdir() })
  await (await pm.spawn('exit 0')).wait()
  await settle()
  const before = snapshot()
  const kept = []
  for (let i = 0; i < n; i++) {
    const h = await pm.spawn('exit 0')
    await h.wait()
    kept.push(h)
  }
  await settle()
  const after = snapshot()
  const tracked = (await pm.list()).length
  await pm.close()
  return { n, tracked, kept: kept.length, before, after }
}

// ---- 2. many alive at once -----------------------------------------------------------------------

/** `n` sleeping processes at once (half Mastra spawn, half exec), then all killed. */
async function alive(n) {
  const pm = new ProcessManager({ workingDirectory: os.tmpdir() })
  await (await pm.spawn('exit 0')).wait()
  await settle()
  const before = snapshot()
  const pgids = new Set()
  const handles = []
  const procs = []
  const t0 = Date.now()
  await lanes(n, 16, async (i) => {
    if (i % 2 === 0) {
      const h = await pm.spawn('sleep 600')
      pgids.add(Number(h.pid))
      handles.push(h)
    } else {
      const p = await pm.exec(['sleep', '600'])
      pgids.add(p.pid)
      procs.push(p)
    }
  })
  const spawnMs = Date.now() - t0
  await sleep(200)
  const during = snapshot()
  const aliveDuring = leftovers(pgids)
  const t1 = Date.now()
  await Promise.all([...handles.map((h) => pm.kill(h.pid)), ...procs.map((p) => p.kill(9).then(() => p.waitForExit()))])
  const killMs = Date.now() - t1
  await pm.close()
  await settle()
  return { n, spawnMs, killMs, aliveDuring, before, during, after: snapshot(), leftovers: leftovers(pgids) }
}

// ---- 3. kill storms ------------------------------------------------------------------------------

const isBool = (v) => v === true || v === false

/**
 * Kill while spawning (each handle killed the moment its spawn resolves; a manager closed while
 * spawns are in flight), kill twice, kill after exit, and one process killed from many handles at
 * once. Any rejection other than the documented ones counts as unexpected.
 */
async function killStorms(n) {
  const pgids = new Set()
  const unexpected = []
  const note = (what) => (e) => unexpected.push(`${what}: ${e && e.code ? e.code : ''} ${e && e.message}`)
  const t0 = Date.now()

  // a) kill while spawning
  const pm = new ProcessManager({ workingDirectory: os.tmpdir() })
  const spawning = Array.from({ length: n }, (_, i) =>
    (i % 2 ? pm.exec(['sh', '-c', 'sleep 600 & sleep 600']) : pm.spawn('sleep 600 & sleep 600')).then((h) => {
      pgids.add(Number(h.pid))
      return i % 2 ? h.kill(9) : h.kill().then((r) => isBool(r) || unexpected.push(`kill returned ${r}`))
    }, note('spawn')),
  )
  await within(10_000, Promise.all(spawning), 'kill while spawning')
  const marks = { spawning: Date.now() - t0 }

  // b) a manager closed while spawns are in flight: each spawn is refused or its process killed
  const pm2 = new ProcessManager({ workingDirectory: os.tmpdir() })
  let refused = 0 // rejected with PROCESS_MANAGER_CLOSED (killed at once if it had started)
  let launched = 0 // resolved before the close, then killed by it
  const inflight = Array.from({ length: n }, (_, i) =>
    (i % 2 ? pm2.exec(['sleep', '600']) : pm2.spawn('sleep 600')).then(
      (h) => {
        launched++
        pgids.add(Number(h.pid))
      },
      (e) => (e.code === 'PROCESS_MANAGER_CLOSED' ? refused++ : note('spawn during close')(e)),
    ),
  )
  // Close as soon as the first of them is launched, so that some are launched and some refused.
  await Promise.race(inflight.slice(0, 1).concat(sleep(2000)))
  await within(10_000, pm2.close(), 'close during spawns')
  await within(10_000, Promise.all(inflight), 'spawns during close')
  marks.closeDuringSpawns = Date.now() - t0

  // c) kill twice (concurrently and again), then kill after exit
  const twice = []
  const views = [] // Processes API views taken while running (the manager keeps only 64 exited records)
  for (let i = 0; i < n; i++) twice.push(await pm.spawn('sleep 600'))
  for (const h of twice) {
    pgids.add(Number(h.pid))
    views.push(await pm.getProcess(h.id))
  }
  const doubled = await Promise.all(twice.map((h) => Promise.all([h.kill(), h.kill()])))
  if (!doubled.every(([a, b]) => isBool(a) && isBool(b) && (a || b))) unexpected.push('kill twice: a result was not a boolean, or neither was true')
  await within(10_000, Promise.all(twice.map((h) => h.wait())), 'wait after kill twice')
  const afterExit = await Promise.all(twice.map((h) => h.kill()))
  if (!afterExit.every((r) => r === false)) unexpected.push('kill after exit did not return false')
  for (const view of views) {
    await view.kill(9).catch(note('Process.kill after exit'))
    await view.kill().catch(note('Process.kill() after exit'))
  }

  marks.twice = Date.now() - t0
  // d) one process, many handles, all at once: the Mastra handle, the Processes API view (twice),
  //    the manager by pid, and an aborted wait
  const many = []
  for (let i = 0; i < n; i++) many.push(await pm.spawn('sleep 600 & sleep 600'))
  for (const h of many) pgids.add(Number(h.pid))
  let calls = 0
  await within(
    10_000,
    Promise.all(
      many.map(async (h) => {
        const view = await pm.getProcess(h.id)
        const view2 = await pm.getProcess(h.id)
        const ops = [h.kill(), h.kill(9), view.kill(9), view2.kill(15), pm.kill(h.pid), h.wait({ abortSignal: AbortSignal.abort() }), view.kill(9)]
        calls += ops.length
        await Promise.all(ops.map((o) => o.catch(note('many handles'))))
        await view.waitForExit()
      }),
    ),
    'kill from many handles',
  )
  await pm.close()
  await settle()
  marks.manyHandles = Date.now() - t0
  return { n, calls, refused, launched, marks, ms: Date.now() - t0, unexpected, leftovers: leftovers(pgids), after: snapshot() }
}

// ---- 4. stdin writes racing exit -----------------------------------------------------------------

const STDIN_CODES = new Set(['PROCESS_ALREADY_EXITED', 'PROCESS_STDIN_WRITE_FAILED', 'PROCESS_STDIN_CLOSED'])

/**
 * `n` children that exit at once, after one byte, or after 100 KB of stdin, each sent five
 * 64 KiB writes and an EOF without waiting: every call resolves or rejects with a stdin code.
 */
async function stdinRace(n) {
  const pm = new ProcessManager({ workingDirectory: os.tmpdir() })
  const scripts = ['exit 0', 'head -c 1 >/dev/null', 'head -c 100000 >/dev/null']
  const outcomes = { ok: 0 }
  const unexpected = []
  const pgids = new Set()
  const chunk = Buffer.alloc(64 * 1024, 120)
  const t0 = Date.now()
  await lanes(n, 8, async (i) => {
    const h = await pm.spawn(scripts[i % scripts.length])
    pgids.add(Number(h.pid))
    const calls = [0, 1, 2, 3, 4].map(() => h.sendStdin(i % 2 ? chunk : chunk.toString()))
    calls.push(h.closeStdin())
    const settled = await within(10_000, Promise.allSettled(calls), `stdin race ${i}`)
    for (const s of settled) {
      if (s.status === 'fulfilled') outcomes.ok++
      else if (STDIN_CODES.has(s.reason.code)) outcomes[s.reason.code] = (outcomes[s.reason.code] || 0) + 1
      else unexpected.push(`${s.reason.code} ${s.reason.message}`)
    }
    await within(10_000, h.wait(), 'wait after stdin race')
    pm.release(h.pid)
  })
  const ms = Date.now() - t0
  await pm.close()
  await settle()
  return { n, calls: n * 6, ms, outcomes, unexpected, leftovers: leftovers(pgids), after: snapshot() }
}

// ---- 5. a consumer that stops reading while the child floods ---------------------------------------

/**
 * Checks numbered lines ("1\n2\n…") arriving in chunks. `gap()` marks a known hole (a
 * `truncated` event): the partial line on each side is dropped and numbering may jump forward.
 * Anything else out of order is counted in `disorder`.
 */
class LineChecker {
  constructor() {
    this.carry = ''
    this.expect = 1
    this.lines = 0
    this.segments = 1
    this.disorder = 0
    this.skipPartial = false
    this.first = undefined
    this.last = undefined
  }

  push(data) {
    const text = this.carry + (typeof data === 'string' ? data : Buffer.from(data.buffer, data.byteOffset, data.byteLength).toString('latin1'))
    const parts = text.split('\n')
    this.carry = parts.pop()
    for (const line of parts) {
      if (this.skipPartial) {
        this.skipPartial = false
        continue
      }
      const v = Number(line)
      if (this.expect === null) this.expect = v
      if (v !== this.expect) this.disorder++
      this.expect = v + 1
      this.lines++
      if (this.first === undefined) this.first = v
      this.last = v
    }
  }

  gap() {
    this.carry = ''
    this.skipPartial = true
    this.expect = null
    this.segments++
  }

  /** After a gap, numbering must move forward. */
  get monotonic() {
    return this.disorder === 0
  }
}

/**
 * Processes API `logs()`: the stream is opened and then not read while `seq 1 lines` floods; after the
 * exit it is read to the end. Kept: what the stream had queued, one `truncated` event, then the
 * newest retained events, each run in order.
 */
async function floodPausedLogs(lines) {
  const pm = new ProcessManager({ workingDirectory: os.tmpdir() })
  await settle()
  const base = rss()
  const sampler = rssSampler()
  const p = await pm.exec(['seq', '1', String(lines)])
  const stream = await p.logs({ replay: true, follow: true })
  const exit = await within(60_000, p.waitForExit(), 'flood (paused logs)')
  const peak = sampler.stop()
  const check = new LineChecker()
  let truncatedEvents = 0
  let bytes = 0
  let terminal = 0
  for await (const e of stream) {
    if (e.type === 'truncated') {
      truncatedEvents++
      check.gap()
    } else if (e.type === 'stdout') {
      bytes += e.data.byteLength
      check.push(e.data)
    } else if (e.type === 'terminal') terminal++
  }
  await pm.close()
  return { lines, exit: exit.code, peakGrowthMB: (peak - base) / MB, keptBytes: bytes, truncatedEvents, terminal, keptLines: check.lines, lastLine: check.last, firstLine: check.first, inOrder: check.monotonic }
}

/**
 * `reader` (a byte stream) paused while the child floods: the reader holds the producer back, so
 * the child waits (bounded memory, nothing lost) instead of the stream skipping bytes. Read the
 * first 64 KiB, pause for a while (the child must still be running, blocked on its pipe), then
 * resume: every line arrives exactly once, in order, and the stream ends at exit.
 */
async function floodPausedReader(lines) {
  const pm = new ProcessManager({ workingDirectory: os.tmpdir() })
  await settle()
  const base = rss()
  const sampler = rssSampler()
  // The flood starts once the reader is attached (one byte on stdin is the go): a reader
  // created after the log evicted output would rightly fail with PROCESS_OUTPUT_TRUNCATED.
  const h = await pm.spawn(`head -c 1 >/dev/null; seq 1 ${lines}`)
  const reader = h.reader
  const ended = new Promise((resolve) => {
    reader.once('end', () => resolve('end'))
    reader.once('error', (e) => resolve(e.code || e.message))
  })
  const check = new LineChecker()
  let got = 0
  let onData
  const prefix = new Promise((resolve) => {
    onData = (d) => {
      check.push(d)
      got += d.length
      if (got >= 64 * 1024) resolve()
    }
    reader.on('data', onData)
  })
  await h.sendStdin('g')
  await within(60_000, Promise.race([prefix, ended]), 'paused reader prefix')
  reader.pause()
  reader.off('data', onData)
  await new Promise((r) => setTimeout(r, 300))
  const runningWhilePaused = h.exitCode === undefined
  const peakPaused = sampler.stop()
  reader.on('data', (d) => check.push(d))
  reader.resume()
  const readerEnded = await within(60_000, ended, 'paused reader end')
  const r = await within(60_000, h.wait(), 'flood (paused reader)')
  await pm.close()
  return {
    lines,
    exit: r.exitCode,
    peakGrowthMB: (peakPaused - base) / MB,
    runningWhilePaused,
    readerEnded,
    readLines: check.lines,
    inOrder: check.monotonic && check.first === 1,
    lastLine: check.last,
  }
}

/**
 * A slow `onStdout` listener (1 ms of work per chunk, far slower than `seq`) on a flood: the
 * listener pump slows the child down instead of dropping, so every line arrives once, in order,
 * in bounded memory.
 */
async function floodSlowListener(lines) {
  const pm = new ProcessManager({ workingDirectory: os.tmpdir() })
  await settle()
  const base = rss()
  const sampler = rssSampler()
  const check = new LineChecker()
  let chunks = 0
  const h = await pm.spawn(`seq 1 ${lines}`, {
    maxRetainedBytes: 0,
    onStdout: (d) => {
      chunks++
      check.push(d)
      const until = process.hrtime.bigint() + 1_000_000n
      while (process.hrtime.bigint() < until);
    },
  })
  const r = await within(120_000, h.wait(), 'flood (slow listener)')
  const peak = sampler.stop()
  await pm.close()
  return { lines, exit: r.exitCode, chunks, peakGrowthMB: (peak - base) / MB, gotLines: check.lines, lastLine: check.last, inOrder: check.monotonic && check.first === 1 }
}

module.exports = {
  MB,
  gc,
  fdCount,
  fdLimit,
  threadCount,
  children,
  leftovers,
  snapshot,
  settle,
  rssSampler,
  within,
  LineChecker,
  cycles,
  keptHandles,
  alive,
  killStorms,
  stdinRace,
  floodPausedLogs,
  floodPausedReader,
  floodSlowListener,
}
