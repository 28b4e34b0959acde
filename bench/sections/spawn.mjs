// 1 + 2: spawn throughput and latency until exit (`/bin/true` as argv, `sh -c true`), one at a
// time and 16 in flight, and the event-loop time each spawn costs: the synchronous (wall) time of
// the spawn call, and the JS thread's CPU time per spawn over a batch (process.threadCpuUsage),
// which also counts the JS work that completes a spawn (callbacks, promise resolution); the event
// loop's active time (performance.eventLoopUtilization) is kept in results.json.
// Contenders are interleaved: every round runs each of them once, in a rotated order.

import { performance } from 'node:perf_hooks'
import { spawnContenders } from '../lib/contenders.mjs'
import { runLimit } from '../lib/setup.mjs'
import { median, p99, rotate } from '../lib/stats.mjs'

const now = () => performance.now()
/** CPU µs of the JS thread so far (Node >= 22.19: process.threadCpuUsage; tick-granular, so per batch only). */
const threadCpu = () => {
  if (typeof process.threadCpuUsage !== 'function') return NaN
  const u = process.threadCpuUsage()
  return u.user + u.system
}

async function batch(c, n, inflight) {
  if (c.limitArgv) {
    const j = await runLimit(['spawn', n, inflight, ...c.limitArgv])
    return { perSec: j.perSec, latP50: j.latP50, latP99: j.latP99, syncP50: j.callP50, syncP99: j.callP99 }
  }
  const lat = []
  const sync = []
  let started = 0
  const worker = async () => {
    while (started < n) {
      started++
      const a = now()
      const s = await c.run()
      lat.push((now() - a) * 1000)
      if (s !== undefined) sync.push(s * 1000)
    }
  }
  const e0 = performance.eventLoopUtilization()
  const c0 = threadCpu()
  const t0 = now()
  await Promise.all(Array.from({ length: inflight }, worker))
  const secs = (now() - t0) / 1000
  const cpu = threadCpu() - c0
  const elu = performance.eventLoopUtilization(e0)
  return {
    perSec: n / secs,
    latP50: median(lat),
    latP99: p99(lat),
    syncP50: sync.length ? median(sync) : undefined,
    syncP99: sync.length ? p99(sync) : undefined,
    eluUsPerSpawn: (elu.active * 1000) / n,
    jsCpuUsPerSpawn: Number.isNaN(cpu) ? undefined : cpu / n,
  }
}

/**
 * @returns rows: { form, mode, inflight, name, procvisor, perSec, latP50, latP99, syncP50, syncP99, eluUsPerSpawn }
 * (µs for latencies and times, medians over rounds of each batch's statistic).
 */
export async function spawnSection(ctx, { rounds, seqN, parN, inflight = 16, log }) {
  const rows = []
  for (const form of ['argv', 'shell']) {
    const contenders = spawnContenders(ctx, form)
    for (const c of contenders) await batch(c, 20, 1) // warm-up (JIT, lazy imports, runtimes)
    for (const mode of [
      { mode: '1 at a time', k: 1, n: seqN },
      { mode: `${inflight} in flight`, k: inflight, n: parN },
    ]) {
      const acc = new Map(contenders.map((c) => [c, []]))
      for (let r = 0; r < rounds; r++) {
        for (const c of rotate(contenders, r)) acc.get(c).push(await batch(c, mode.n, mode.k))
      }
      for (const c of contenders) {
        const bs = acc.get(c)
        const m = (k) => (bs.every((b) => b[k] === undefined) ? undefined : median(bs.map((b) => b[k])))
        const row = {
          form: form === 'argv' ? '/bin/true (argv)' : 'sh -c true',
          mode: mode.mode,
          inflight: mode.k,
          name: c.name,
          procvisor: Boolean(c.procvisor),
          limit: Boolean(c.limitArgv),
          n: mode.n * rounds,
          perSec: m('perSec'),
          perSecRounds: bs.map((b) => b.perSec),
          latP50: m('latP50'),
          latP99: m('latP99'),
          syncP50: m('syncP50'),
          syncP99: m('syncP99'),
          eluUsPerSpawn: m('eluUsPerSpawn'),
          jsCpuUsPerSpawn: m('jsCpuUsPerSpawn'),
        }
        rows.push(row)
        log(`  ${row.form.padEnd(17)} ${row.mode.padEnd(12)} ${row.name.padEnd(34)} ${row.perSec.toFixed(0).padStart(6)}/s  p50 ${(row.latP50 / 1000).toFixed(2)} ms`)
      }
    }
  }
  return rows
}
