// 8: a persistent sandbox against a local one. The same NativeLocalSandbox API, once with its
// processes in this Node process and once under a supervisor reached over its Unix socket, in
// interleaved rounds (each round runs both, in a rotated order). Three workloads:
//
// - spawn until exit: `processes.spawn('true')` then `wait()`, one at a time, and with 16 in
//   flight (each of 16 workers spawns and waits in turn: over the socket, the calls of the 16
//   are on the connection together, answered in any order); and `echo x` with 16 in flight,
//   whose output makes the persistent sandbox write a log file for each;
// - output to a listener: `head -c 256 MiB /dev/zero` to `onStdout`, from the spawn to `wait()`;
// - a followed log: the same bytes read from `nativeHandle.logs({ follow: true })`, counted as
//   they are received.
//
// A third sandbox is persistent with its output sent over the socket as bytes
// (PROCVISOR_SHARED_OUTPUT=0), as where shared memory cannot be had: the fallback's figures, and
// the supervisor's CPU per MiB of output both ways (read from /proc, for the 256 MiB listener).
// A fourth is persistent without log files (`logDirectory: false`; a persistent sandbox writes
// them by default, the local one does not): what crossing to another process costs alone; a
// fifth is local with log files, to compare followed logs() like for like.
//
// Each figure is persistent ÷ local within a round; the table gives the median and the spread
// over rounds, so machine noise that lands on one round does not make a ratio.

import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { createRequire } from 'node:module'
import { performance } from 'node:perf_hooks'
import { ROOT } from '../lib/setup.mjs'
import { median, rotate } from '../lib/stats.mjs'

const now = () => performance.now()
const MiB = 1024 * 1024

async function spawnUntilExit(sandbox, n) {
  const t = now()
  for (let i = 0; i < n; i++) {
    const h = await sandbox.processes.spawn('true')
    await h.wait()
    sandbox.processes.release(h.pid)
  }
  return n / ((now() - t) / 1000)
}

async function spawnInFlight(sandbox, n, inflight, command = 'true') {
  let left = n
  const worker = async () => {
    while (left-- > 0) {
      const h = await sandbox.processes.spawn(command)
      await h.wait()
      sandbox.processes.release(h.pid)
    }
  }
  const t = now()
  await Promise.all(Array.from({ length: inflight }, worker))
  return n / ((now() - t) / 1000)
}

/**
 * CPU seconds each thread of process `pid` has spent, by thread id, from the kernel's nanosecond
 * count (`schedstat`); null where it is not kept. A supervisor spends 50-150 ms per 256 MiB, 5 to
 * 15 clock ticks of 10 ms: counted in ticks (`stat`), a ratio of two such figures moved by a tenth
 * with one tick.
 */
function threadSeconds(pid) {
  try {
    const out = new Map()
    for (const t of fs.readdirSync(`/proc/${pid}/task`)) out.set(t, Number(fs.readFileSync(`/proc/${pid}/task/${t}/schedstat`, 'utf8').split(' ')[0]) / 1e9)
    return [...out.values()].every(Number.isFinite) ? out : null
  } catch {
    return null
  }
}

/** CPU seconds (user + system) process `pid` has used, in clock ticks, or NaN where /proc cannot tell. */
function cpuSeconds(pid) {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8')
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    return (Number(f[11]) + Number(f[12])) / 100
  } catch {
    return NaN
  }
}

/**
 * The supervisor's CPU milliseconds per MiB while `mib` MiB go to a listener: what its threads
 * spent meanwhile, thread by thread (a thread that ends meanwhile, an idle one of the blocking
 * pool, takes only its time since the start with it), else its ticks.
 */
async function supervisorCpu(sandbox, mib) {
  const pid = sandbox._runtime.connection?.()?.sandbox?.pid
  const threads = threadSeconds(pid)
  const before = cpuSeconds(pid)
  await toListener(sandbox, mib)
  const after = threads && threadSeconds(pid)
  if (!after) return ((cpuSeconds(pid) - before) * 1000) / mib
  let spent = 0
  for (const [t, secs] of after) spent += secs - (threads.get(t) ?? 0)
  return (spent * 1000) / mib
}

async function toListener(sandbox, mib) {
  let bytes = 0
  const t = now()
  const h = await sandbox.processes.spawn(`head -c ${mib * MiB} /dev/zero`, { maxRetainedBytes: 0, onStdout: (d) => (bytes += d.length) })
  await h.wait()
  const secs = (now() - t) / 1000
  sandbox.processes.release(h.pid)
  if (bytes !== mib * MiB) throw new Error(`onStdout received ${bytes} of ${mib * MiB} bytes`)
  return bytes / 1e6 / secs
}

async function followedLog(sandbox, mib) {
  let bytes = 0
  const t = now()
  const h = await sandbox.processes.spawn(`head -c ${mib * MiB} /dev/zero`, { maxRetainedBytes: 0 })
  for await (const e of await h.nativeHandle.logs({ follow: true })) {
    if (e.type === 'stdout' || e.type === 'stderr') bytes += e.data.length
  }
  const secs = (now() - t) / 1000
  await h.wait()
  sandbox.processes.release(h.pid)
  // The log keeps 1 MiB: a reader that falls behind skips what was evicted (a `truncated` event),
  // so what counts is what it received per second.
  return bytes / 1e6 / secs
}

// Each workload runs on `base` and `against` (the ratio is against ÷ base) and, unless `bytes`
// is false, on the persistent sandbox with output as bytes (a column of its own).
const WORKLOADS = [
  { key: 'spawn', title: () => 'spawn until exit, one at a time (spawns/s)', run: (s, c) => spawnUntilExit(s, c.spawnN) },
  { key: 'spawn16', title: () => 'spawn until exit, 16 in flight (spawns/s)', run: (s, c) => spawnInFlight(s, c.spawnN * 2, 16) },
  // `true` writes nothing, and a log that is its end alone makes no file; a command that writes
  // makes one (a persistent sandbox's default), and this row says what that file costs here.
  { key: 'spawnEcho', title: () => 'spawn `echo x` until exit, 16 in flight: a log file each (spawns/s)', run: (s, c) => spawnInFlight(s, c.spawnN * 2, 16, 'echo x'), bytes: false },
  { key: 'listener', title: (c) => `${c.mib} MiB to onStdout (MB/s)`, run: (s, c) => toListener(s, c.mib) },
  { key: 'logs', title: (c) => `${c.mib} MiB through a followed logs() stream (MB/s received)`, run: (s, c) => followedLog(s, c.mib) },
  // Like for like: a local reader that falls behind skips what its 1 MiB no longer holds, the
  // persistent one reads it from its log files; here the local sandbox has log files too.
  { key: 'logsLike', title: (c) => `${c.mib} MiB through a followed logs() stream, both with log files (MB/s received)`, run: (s, c) => followedLog(s, c.mib), base: 'localLogs', bytes: false },
  // What the socket costs alone: a persistent sandbox without log files (logDirectory: false),
  // as the local one has none.
  { key: 'listenerNoLogs', title: (c) => `${c.mib} MiB to onStdout, persistent without log files (MB/s)`, run: (s, c) => toListener(s, c.mib), against: 'nologs', bytes: false },
  // The supervisor's work: shared memory against bytes.
  { key: 'supervisorCpu', title: (c) => `supervisor CPU per MiB to onStdout, ${c.mib} MiB (ms/MiB; lower is better)`, run: (s, c) => supervisorCpu(s, c.mib), base: 'bytes', bytes: false },
]

/** Starts a sandbox whose supervisor and client send output as bytes (the variable is read at start). */
async function startAsBytes(sandbox) {
  const was = process.env.PROCVISOR_SHARED_OUTPUT
  process.env.PROCVISOR_SHARED_OUTPUT = '0'
  try {
    await sandbox.start()
  } finally {
    if (was === undefined) delete process.env.PROCVISOR_SHARED_OUTPUT
    else process.env.PROCVISOR_SHARED_OUTPUT = was
  }
}

export async function persistentSection({ rounds, spawnN, mib, log }) {
  const { NativeLocalSandbox } = createRequire(import.meta.url)(path.join(process.env.BENCH_PROCVISOR_ROOT || ROOT, 'mastra/index.js'))
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'procvisor-bench-persistent-')))
  const id = `bench-${process.pid}`
  const sandboxes = [
    { name: 'local', sandbox: new NativeLocalSandbox({ id: `${id}-local`, workingDirectory: path.join(dir, 'local'), env: { PATH: process.env.PATH } }) },
    { name: 'persistent', sandbox: new NativeLocalSandbox({ id: `${id}-persistent`, workingDirectory: path.join(dir, 'persistent'), env: { PATH: process.env.PATH }, persistent: true, timeoutMs: 600_000 }) },
    { name: 'bytes', sandbox: new NativeLocalSandbox({ id: `${id}-bytes`, workingDirectory: path.join(dir, 'bytes'), env: { PATH: process.env.PATH }, persistent: true, timeoutMs: 600_000 }) },
    { name: 'localLogs', sandbox: new NativeLocalSandbox({ id: `${id}-local-logs`, workingDirectory: path.join(dir, 'local-logs'), env: { PATH: process.env.PATH }, logDirectory: path.join(dir, 'local-logs.logs') }) },
    { name: 'nologs', sandbox: new NativeLocalSandbox({ id: `${id}-nologs`, workingDirectory: path.join(dir, 'nologs'), env: { PATH: process.env.PATH }, persistent: true, timeoutMs: 600_000, logDirectory: false }) },
  ]
  const config = { spawnN, mib }
  const results = Object.fromEntries(WORKLOADS.map((w) => [w.key, Object.fromEntries(sandboxes.map((s) => [s.name, []]))]))
  const runsOn = (w) => [w.base ?? 'local', w.against ?? 'persistent', ...(w.bytes === false ? [] : ['bytes'])]
  try {
    for (const s of sandboxes) await (s.name === 'bytes' ? startAsBytes(s.sandbox) : s.sandbox.start())
    // Not counted: the first spawns of each sandbox compile its code paths (JIT, on both sides
    // of the socket), which a round of a few hundred spawns would otherwise carry for one side.
    for (const s of sandboxes) await spawnUntilExit(s.sandbox, 50)
    for (let r = 0; r < rounds; r++) {
      for (const w of WORKLOADS) {
        for (const s of rotate(sandboxes, r)) {
          if (!runsOn(w).includes(s.name)) continue
          const v = await w.run(s.sandbox, config)
          results[w.key][s.name].push(v)
          log(`   round ${r + 1}, ${w.key}, ${s.name}: ${v.toFixed(1)}`)
        }
      }
    }
  } finally {
    for (const s of sandboxes) await s.sandbox.destroy().catch(() => {})
    fs.rmSync(dir, { recursive: true, force: true })
  }
  const spread = (xs, ys) => {
    const ratios = xs.map((x, i) => x / ys[i])
    return { ratio: median(ratios), min: Math.min(...ratios), max: Math.max(...ratios), rounds: ratios.length }
  }
  return WORKLOADS.map((w) => {
    const r = results[w.key]
    const [base, against] = [r[w.base ?? 'local'], r[w.against ?? 'persistent']]
    const withBytes = w.bytes !== false
    return {
      key: w.key,
      title: w.title(config),
      baseName: w.base ?? 'local',
      local: median(base),
      persistent: median(against),
      bytes: withBytes ? median(r.bytes) : null,
      ...spread(against, base),
      asBytes: withBytes ? spread(r.bytes, r.local) : undefined,
    }
  })
}
