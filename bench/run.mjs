// `npm run bench`: procvisor side by side with child_process, execa, tinyexec, Mastra's LocalSandbox
// process manager and the limit (bench/limit, plain Rust), in one run, contenders interleaved.
// Prints the tables and the performance targets, and writes bench/RESULTS.md.
//
// Environment knobs (for development; RESULTS.md is only written by a full, default run):
//   BENCH_ONLY=spawn,heap,output,idle,lag,snapshot,terminal,persistent,web   run a subset (BENCH_ONLY=snapshot: checkpoints alone)
//   BENCH_QUICK=1                           small sample sizes
//   BENCH_PROCVISOR_ROOT=/path/to/package   A/B: another copy of procvisor's JS package
//   BENCH_ADDON=/path/to/procvisor.node     A/B: another build of the addon
//   BENCH_VERBOSE=1                         every output run, not only the medians
//   BENCH_SNAPSHOT_CACHE=warm               checkpoints with the tree in the page cache (default as root: dropped)

import fs from 'node:fs'
import path from 'node:path'
import { spawn } from 'node:child_process'
import { BENCH, ROOT, buildLimit, stageAddon, machine, findProcesses, waitQuiet } from './lib/setup.mjs'

const t0 = Date.now()
const log = (s) => process.stdout.write(`${s}\n`)
// No forced GCs between runs: a full GC measurably slows the next contender (V8's heuristics then
// run concurrent marking on its worker threads while the next run allocates Buffers).

const only = process.env.BENCH_ONLY ? new Set(process.env.BENCH_ONLY.split(',')) : null
const quick = process.env.BENCH_QUICK === '1'
const abRun = Boolean(process.env.BENCH_PROCVISOR_ROOT || process.env.BENCH_ADDON)
const full = !only && !quick && !abRun
const want = (s) => !only || only.has(s)

const CONFIG = quick
  ? { rounds: 2, seqN: 40, parN: 80, heap: [{ gib: 0, n: 20 }, { gib: 2, n: 6 }], outRounds: 1, idleN: 100, idleRounds: 1, lagRounds: 1, lagProcs: 50, snapshot: { rounds: 2, small: 3000, big: 20 }, terminal: { rounds: 1, mib: 20, latN: 20 }, persistent: { rounds: 2, spawnN: 20, mib: 32 }, web: { rounds: 2, processes: 200 } }
  : { rounds: 4, seqN: 150, parN: 300, heap: [{ gib: 0, n: 150 }, { gib: 2, n: 40 }, { gib: 6, n: 30 }], outRounds: 4, idleN: 500, idleRounds: 1, lagRounds: 2, lagProcs: 50, snapshot: { rounds: 3, small: 16000, big: 160 }, terminal: { rounds: 3, mib: 100, latN: 50 }, persistent: { rounds: 5, spawnN: 500, mib: 256 }, web: { rounds: 5, processes: 200 } }

function version(pkg) {
  try {
    return JSON.parse(fs.readFileSync(path.join(ROOT, 'node_modules', pkg, 'package.json'), 'utf8')).version
  } catch {
    return 'not installed'
  }
}

/**
 * The `npm run bench` that started us, if any (the build runs before us, so its start time gives
 * the whole run's duration): { startedSecsAgo } or undefined.
 */
function npmAncestor() {
  try {
    const hz = 100 // USER_HZ on Linux
    const uptime = Number(fs.readFileSync('/proc/uptime', 'utf8').split(' ')[0])
    let pid = process.ppid
    let found
    for (let i = 0; i < 8 && pid > 1; i++) {
      const argv = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ')
      const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8')
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
      if (/npm/.test(argv) && /\brun(-script)? bench\b/.test(argv)) found = { startedSecsAgo: uptime - Number(fields[19]) / hz }
      pid = Number(fields[1])
    }
    return found
  } catch {
    return undefined
  }
}

log('procvisor bench: building the limit (bench/limit, release)…')
buildLimit()
const addon = stageAddon()
const m = machine()
log(`machine: ${m.cpu}, ${m.cores} cores, ${m.memGiB} GiB, ${m.kernel}, Node ${m.node}, load ${m.loadavg}`)
log(`addon: ${addon.path}${addon.builtAt ? ` (built ${addon.builtAt})` : ''}`)

const { WORKLOADS } = await import('./sections/output.mjs')
const { targets, markdown, render } = await import('./lib/report.mjs')

const res = {
  date: new Date().toISOString(),
  machine: m,
  addon,
  command: npmAncestor() || process.env.npm_lifecycle_event === 'bench' ? 'npm run bench' : 'node bench/run.mjs',
  versions: { execa: version('execa'), tinyexec: version('tinyexec'), mastra: version('@mastra/core') },
  idleN: CONFIG.idleN,
  busyBefore: {},
  leftBehind: [],
}

/** Runs one section in a fresh Node process (bench/children/section-child.mjs). */
function section(name, config) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(BENCH, 'children', 'section-child.mjs'), name, JSON.stringify(config)], {
      stdio: ['ignore', 'pipe', 'inherit'],
    })
    let stdout = ''
    child.stdout.on('data', (d) => (stdout += d))
    child.on('error', reject)
    child.on('close', (code) => {
      if (code !== 0) return reject(new Error(`section ${name} failed (exit ${code})`))
      const out = JSON.parse(stdout.trim().split('\n').pop())
      if (out.mastraError) res.mastraError = out.mastraError
      res.leftBehind.push(...out.leftBehind)
      resolve(out.result)
    })
  })
}

// Other work on this (shared) machine lands in whichever contender runs beside it: before each
// section wait for the CPUs to be quiet, from a budget of 180 s for the whole run (< 10 minutes).
let waitBudget = 180
const timed = async (title, name, config) => {
  log(`\n== ${title}`)
  const w0 = Date.now()
  res.busyBefore[title] = await waitQuiet({ log, maxSecs: Math.max(0, Math.min(90, waitBudget)) })
  waitBudget -= (Date.now() - w0) / 1000
  const a = Date.now()
  const r = await section(name, config)
  log(`   (${((Date.now() - a) / 1000).toFixed(1)} s)`)
  return r
}

if (want('spawn')) res.spawn = await timed('1-2. spawn until exit', 'spawn', { rounds: CONFIG.rounds, seqN: CONFIG.seqN, parN: CONFIG.parN })
if (want('heap')) res.heap = await timed('3. spawn latency as the parent grows', 'heap', { sizes: CONFIG.heap })
if (want('output')) res.output = await timed('4. output throughput to JS', 'output', { rounds: CONFIG.outRounds, workloads: ['bulk', 'yes', 'perLine'] })
if (want('idle')) res.idle = await timed('5a. memory per idle process', 'idle', { n: CONFIG.idleN, rounds: CONFIG.idleRounds })
if (want('lag')) res.lag = await timed('5b. event-loop lag while streaming', 'lag', { rounds: CONFIG.lagRounds, procs: CONFIG.lagProcs })
if (want('snapshot')) res.snapshot = await timed('6. checkpoints of a working tree', 'snapshot', CONFIG.snapshot)
if (want('terminal')) res.terminal = await timed('7. processes on a terminal', 'terminal', CONFIG.terminal)
if (want('persistent')) res.persistent = await timed('8. a persistent sandbox against a local one', 'persistent', CONFIG.persistent)
if (want('web')) res.web = await timed('9. the web view: first paint of an index of 200 processes', 'web', CONFIG.web)

// No contender may leave a process behind: each section's process checked its own children; here,
// no `sleep 60.x` of the memory test may be alive anywhere.
const sleeps = findProcesses(['sleep']).filter((pid) => {
  try {
    return /^60\.\d+$/.test(fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0')[1])
  } catch {
    return false
  }
})
for (const pid of sleeps) {
  try {
    process.kill(pid, 'SIGKILL')
  } catch {}
}
res.leaks =
  res.leftBehind.length === 0 && sleeps.length === 0
    ? 'Every section checked that no process it started was left alive (procvisor\'s watchdog exits with its Node), and no `sleep` of the memory test survived.'
    : `LEFT BEHIND (and killed): ${res.leftBehind.join('; ')} ${sleeps.length ? `sleeps: ${sleeps.join(', ')}` : ''}`

res.targets = targets(res)
res.benchSecs = (Date.now() - t0) / 1000
res.totalSecs = npmAncestor()?.startedSecsAgo ?? res.benchSecs
const mEnd = machine()
res.loadEnd = mEnd.loadavg
res.stealSecs = m.stealSecs === undefined ? undefined : mEnd.stealSecs - m.stealSecs
res.abRun = abRun ? { root: process.env.BENCH_PROCVISOR_ROOT, addon: process.env.BENCH_ADDON } : undefined

log('\n== Results')
if (res.spawn) log(`\n${render.spawnTables(res.spawn)}`)
if (res.heap) log(`\n${render.heapTable(res.heap)}`)
if (res.output) log(`\n${render.outputTables(res.output, WORKLOADS)}`)
if (res.idle) log(`\n${render.idleTable(res.idle)}\n`)
if (res.lag) log(`\n${render.lagTable(res.lag)}`)
if (res.snapshot) log(`\n${render.snapshotTables(res.snapshot)}`)
if (res.persistent) log(`\n${render.persistentTable(res.persistent)}`)
const { table, fmt } = await import('./lib/stats.mjs')
const terminalTable = res.terminal
  ? `7. processes on a terminal (${CONFIG.terminal.mib} MiB raw, then \`true\` until exit; medians of ${CONFIG.terminal.rounds} rounds${res.terminal.nodePty ? '' : '; node-pty not installed'})\n\n${table(
      ['', 'MiB/s', 'bytes missing at exit', 'latency p50 ms', 'p99 ms'],
      res.terminal.rows.map((r) => [r.name, fmt(r.mibPerSec), String(r.lostBytes), fmt(r.latP50 / 1000, 2), fmt(r.latP99 / 1000, 2)]),
    )}`
  : undefined
if (terminalTable) log(`\n${terminalTable}`)
const range = (x) => `${fmt(x.median, 0)} (${fmt(x.min, 0)}–${fmt(x.max, 0)})`
const webTable = res.web
  ? `9. the web view's index with ${res.web.processes} running processes, headless Chromium (median (min–max) of ${res.web.rounds} rounds; target: first paint ≤ 300 ms)\n\n${table(
      ['', 'first contentful paint ms', 'every row filled ms'],
      [['procvisor web view', range(res.web.paintMs), range(res.web.rowsMs)]],
    )}`
  : undefined
if (webTable) log(`\n${webTable}`)
log(`\n== Targets\n\n${table(['target', 'this run', 'verdict'], res.targets)}\n`)
log(res.leaks)

const md = markdown(res, { workloads: WORKLOADS }) + (terminalTable ? `\n## ${terminalTable}\n` : '') + (webTable ? `\n## ${webTable}\n` : '')
const out = full ? path.join(BENCH, 'RESULTS.md') : path.join(BENCH, '.cache', 'RESULTS.partial.md')
fs.mkdirSync(path.dirname(out), { recursive: true })
fs.writeFileSync(out, md)
fs.writeFileSync(path.join(BENCH, '.cache', 'results.json'), JSON.stringify(res, null, 1))
log(`\nwrote ${path.relative(ROOT, out)} (bench ${res.benchSecs.toFixed(0)} s${res.command === 'npm run bench' ? `, ${res.totalSecs.toFixed(0)} s since \`npm run bench\` started` : ''})`)
process.exit(0)
