#!/usr/bin/env node
'use strict'
// `npm run soak`: procvisor under sustained load, with the kernel's own figures before, during and
// after. Bounded in time (a few minutes on 2 cores). Exits 1 if a check fails.
//
//   node soak/run.js            full sizes (10,000 cycles, 1,000 alive at once, …)
//   node soak/run.js --quick    the sizes of __test__/reliability.test.js, for a dry run
//
// The scenarios live in soak/scenarios.js and are shared with the quick tests.

const os = require('node:os')
const s = require('./scenarios')

const quick = process.argv.includes('--quick')
const SIZE = quick
  ? { cycles: 400, kept: 200, alive: 200, storm: 30, stdin: 60, flood: 1_000_000, slow: 1_000_000 }
  : { cycles: 10_000, kept: 2_000, alive: 1_000, storm: 200, stdin: 1_000, flood: 10_000_000, slow: 5_000_000 }

// Slack for descriptors and RSS: the runtime may open an epoll or eventfd late, and V8 keeps some
// heap after a burst of allocation. A leak of one descriptor per spawn would be thousands.
const FD_SLACK = 5
const RSS_SLACK_MB = 64
const FLOOD_RSS_MB = 100

const rows = []
let failed = 0

function check(scenario, what, ok, detail) {
  rows.push({ scenario, what, ok, detail })
  if (!ok) failed++
}

function fmtSnap(x) {
  return `fds ${x.fds}, RSS ${x.rssMB} MB (V8 heap ${x.heapMB} used of ${x.heapTotalMB}), threads ${x.threads}, children ${x.children}, zombies ${x.zombies}, liveProcessCount ${x.live}`
}

function section(title) {
  console.log(`\n== ${title}`)
}

function snaps(r, keys) {
  for (const k of keys) console.log(`  ${k.padEnd(7)} ${fmtSnap(r[k])}`)
}

function noGrowth(scenario, r) {
  check(scenario, 'descriptors', r.after.fds - r.before.fds <= FD_SLACK, `${r.before.fds} → ${r.after.fds}`)
  check(scenario, 'RSS', r.after.rssMB - r.before.rssMB <= RSS_SLACK_MB, `${r.before.rssMB} → ${r.after.rssMB} MB`)
  check(scenario, 'children / zombies after', r.after.children === 0 && r.after.zombies === 0, `${r.after.children} / ${r.after.zombies}`)
  check(scenario, 'liveProcessCount after', r.after.live === 0, String(r.after.live))
}

async function main() {
  const t0 = Date.now()
  console.log(`procvisor soak (${quick ? 'quick' : 'full'}) on ${os.cpus().length} cores, Node ${process.version}, pid ${process.pid}`)
  console.log(`RLIMIT_NOFILE ${s.fdLimit()}; figures: /proc/self/fd, RSS, /proc/self/task, our children by ppid (the watchdog left out), liveProcessCount()`)

  section(`1. ${SIZE.cycles.toLocaleString('en')} spawn/wait cycles (Mastra spawn + wait + release, exec + waitForExit, 4 in flight)`)
  let r = await s.cycles(SIZE.cycles)
  snaps(r, ['before', 'mid', 'after'])
  console.log(`  ${r.perSec.toFixed(0)} cycles/s over ${r.seconds.toFixed(1)} s; bad exits ${r.badExits}; live members left in our groups ${r.leftovers}`)
  noGrowth('cycles', r)
  check('cycles', 'JS heap used', r.after.heapMB - r.before.heapMB <= 8, `${r.before.heapMB} → ${r.mid.heapMB} → ${r.after.heapMB} MB`)
  check('cycles', 'descriptors, second half', r.after.fds - r.mid.fds <= FD_SLACK, `${r.mid.fds} → ${r.after.fds}`)
  check('cycles', 'exit codes', r.badExits === 0, `${r.badExits} bad`)
  check('cycles', 'leftovers in our groups', r.leftovers === 0, String(r.leftovers))

  section(`1b. ${SIZE.kept.toLocaleString('en')} exited handles kept (Mastra list() holds them)`)
  r = await s.keptHandles(SIZE.kept)
  snaps(r, ['before', 'after'])
  console.log(`  tracked by list(): ${r.tracked}`)
  check('kept handles', 'descriptors', r.after.fds - r.before.fds <= FD_SLACK, `${r.before.fds} → ${r.after.fds} with ${r.kept} handles held`)

  let alive = SIZE.alive
  const need = alive * 4 + 200
  if (s.fdLimit() < need) {
    alive = Math.floor((s.fdLimit() - 200) / 4)
    console.log(`\n(RLIMIT_NOFILE ${s.fdLimit()} is below the ${need} descriptors ${SIZE.alive} live processes need: running ${alive})`)
  }
  section(`2. ${alive.toLocaleString('en')} processes alive at once (sleep; half Mastra spawn, half exec), then all killed`)
  r = await s.alive(alive)
  snaps(r, ['before', 'during', 'after'])
  console.log(`  started in ${r.spawnMs} ms; ${r.aliveDuring} live processes in their groups (a Mastra spawn is sh + sleep); killed and gone in ${r.killMs} ms; left ${r.leftovers}`)
  check('alive at once', 'all alive during', r.during.live === alive && r.during.children === alive, `liveProcessCount ${r.during.live}, children ${r.during.children}`)
  check('alive at once', 'threads during', r.during.threads - r.before.threads <= 4, `${r.before.threads} → ${r.during.threads}`)
  noGrowth('alive at once', r)
  check('alive at once', 'leftovers in our groups', r.leftovers === 0, String(r.leftovers))

  section(`3. kill storms (${SIZE.storm} processes per storm)`)
  r = await s.killStorms(SIZE.storm)
  console.log(`  kill while spawning: ${SIZE.storm} killed as their spawn resolved`)
  console.log(`  close during spawns: ${r.launched} launched then killed by close(), ${r.refused} refused with PROCESS_MANAGER_CLOSED (killed if started)`)
  console.log(`  kill twice, kill after exit: ${SIZE.storm} processes; many handles: ${r.calls} concurrent kill calls on ${SIZE.storm} processes`)
  console.log(`  took ${r.ms} ms; unexpected results ${r.unexpected.length}; live members left in our groups ${r.leftovers}`)
  for (const u of r.unexpected.slice(0, 5)) console.log(`    ${u}`)
  console.log(`  after   ${fmtSnap(r.after)}`)
  check('kill storms', 'unexpected results', r.unexpected.length === 0, String(r.unexpected.length))
  check('kill storms', 'leftovers in our groups', r.leftovers === 0, String(r.leftovers))
  check('kill storms', 'close during spawns accounted', r.launched + r.refused === SIZE.storm, `${r.launched} + ${r.refused}`)

  section(`4. stdin writes racing exit (${SIZE.stdin} children, 5 writes of 64 KiB + closeStdin each, not awaited in between)`)
  r = await s.stdinRace(SIZE.stdin)
  console.log(`  ${r.calls} calls in ${r.ms} ms: ${Object.entries(r.outcomes).map(([k, v]) => `${k} ${v}`).join(', ')}`)
  console.log(`  unexpected ${r.unexpected.length}; left ${r.leftovers}`)
  for (const u of r.unexpected.slice(0, 5)) console.log(`    ${u}`)
  check('stdin racing exit', 'only typed stdin outcomes', r.unexpected.length === 0, String(r.unexpected.length))
  check('stdin racing exit', 'leftovers', r.leftovers === 0 && r.after.children === 0, String(r.leftovers))

  section(`5. a consumer that stops reading while the child floods (seq 1 ${SIZE.flood.toLocaleString('en')})`)
  const a = await s.floodPausedLogs(SIZE.flood)
  console.log(`  logs() not read:   peak RSS +${a.peakGrowthMB.toFixed(1)} MB; kept ${a.keptLines} lines (${(a.keptBytes / s.MB).toFixed(2)} MB) after ${a.truncatedEvents} truncated event(s), lines ${a.firstLine}…${a.lastLine}, in order: ${a.inOrder}`)
  check('flood: paused logs()', 'peak RSS growth', a.peakGrowthMB < FLOOD_RSS_MB, `+${a.peakGrowthMB.toFixed(1)} MB`)
  check('flood: paused logs()', 'kept in order, ends at the last line', a.inOrder && a.lastLine === SIZE.flood && a.terminal === 1, `${a.firstLine}…${a.lastLine}`)
  check('flood: paused logs()', 'truncation reported', a.truncatedEvents >= 1, String(a.truncatedEvents))
  const b = await s.floodPausedReader(SIZE.flood)
  console.log(`  reader paused:     peak RSS +${b.peakGrowthMB.toFixed(1)} MB while paused (child still running: ${b.runningWhilePaused}); after resume ${b.readLines} lines, in order: ${b.inOrder}, ended with ${b.readerEnded}`)
  check('flood: paused reader', 'peak RSS growth', b.peakGrowthMB < FLOOD_RSS_MB, `+${b.peakGrowthMB.toFixed(1)} MB`)
  check('flood: paused reader', 'the child waits for the reader', b.runningWhilePaused, String(b.runningWhilePaused))
  check('flood: paused reader', 'every line once, in order, then end', b.inOrder && b.readLines === SIZE.flood && b.lastLine === SIZE.flood && b.readerEnded === 'end', `${b.readLines} lines, ${b.readerEnded}`)
  const c = await s.floodSlowListener(SIZE.slow)
  console.log(`  slow onStdout:     peak RSS +${c.peakGrowthMB.toFixed(1)} MB; ${c.gotLines} of ${SIZE.slow} lines in ${c.chunks} chunks, in order: ${c.inOrder}`)
  check('flood: slow listener', 'peak RSS growth', c.peakGrowthMB < FLOOD_RSS_MB, `+${c.peakGrowthMB.toFixed(1)} MB`)
  check('flood: slow listener', 'every line once, in order', c.inOrder && c.gotLines === SIZE.slow && c.lastLine === SIZE.slow, `${c.gotLines} lines`)

  section('summary')
  const w = [24, 48, 6]
  console.log(`${'scenario'.padEnd(w[0])} ${'check'.padEnd(w[1])} ${'result'.padEnd(w[2])} figures`)
  console.log(`${'-'.repeat(w[0])} ${'-'.repeat(w[1])} ${'-'.repeat(w[2])} ${'-'.repeat(30)}`)
  for (const row of rows) console.log(`${row.scenario.padEnd(w[0])} ${row.what.padEnd(w[1])} ${(row.ok ? 'ok' : 'FAIL').padEnd(w[2])} ${row.detail}`)
  console.log(`\n${rows.length - failed}/${rows.length} checks passed in ${((Date.now() - t0) / 1000).toFixed(1)} s`)
  process.exitCode = failed ? 1 : 0
}

main().catch((e) => {
  console.error(e)
  process.exitCode = 1
})
