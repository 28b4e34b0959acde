// 5b: event-loop lag while 50 processes stream output at once (each `head -c 20000000 /dev/zero`
// through the contender's output callback). Lag is sampled with a 1 ms timer chain: each sample is
// how late the timer fired. The baseline is the same sampler on an idle loop.

import { performance } from 'node:perf_hooks'
import { outputContenders } from '../lib/contenders.mjs'
import { median, p99, quantile, rotate } from '../lib/stats.mjs'

const now = () => performance.now()
const PER_PROCESS = 20_000_000

function sampler() {
  const lags = []
  let last = now()
  let timer
  const tick = () => {
    const t = now()
    lags.push(Math.max(0, t - last - 1))
    last = t
    timer = setTimeout(tick, 1)
  }
  timer = setTimeout(tick, 1)
  return () => {
    clearTimeout(timer)
    return lags
  }
}

/** @returns { baseline: {p50, p99}, rows: [{ name, procvisor, lagP50, lagP99, lagMax, secs, mbps }] } */
export async function lagSection(ctx, { rounds, procs, log }) {
  const stopIdle = sampler()
  await new Promise((r) => setTimeout(r, 500))
  const idle = stopIdle()
  const baseline = { p50: median(idle), p99: p99(idle) }
  log(`  idle loop: lag p50 ${baseline.p50.toFixed(3)} ms, p99 ${baseline.p99.toFixed(3)} ms`)
  const argv = ['head', '-c', String(PER_PROCESS), '/dev/zero']
  const command = argv.join(' ')
  const contenders = outputContenders(ctx, { reader: false }).filter((c) => !c.limit)
  const acc = new Map(contenders.map((c) => [c, []]))
  for (let r = 0; r < rounds; r++) {
    for (const c of rotate(contenders, r)) {
      const stop = sampler()
      const t0 = now()
      const got = await Promise.all(Array.from({ length: procs }, () => c.run(command, argv)))
      const secs = (now() - t0) / 1000
      const lags = stop()
      const bytes = got.reduce((a, b) => a + b, 0)
      if (bytes !== procs * PER_PROCESS) throw new Error(`${c.name}: got ${bytes} of ${procs * PER_PROCESS} bytes`)
      acc.get(c).push({ p50: median(lags), p99: p99(lags), max: quantile(lags, 1), secs, mbps: bytes / 1e6 / secs })
      if (typeof global.gc === 'function') global.gc()
    }
  }
  const rows = contenders.map((c) => {
    const rs = acc.get(c)
    const row = {
      name: c.name,
      procvisor: Boolean(c.procvisor),
      lagP50: median(rs.map((x) => x.p50)),
      lagP99: median(rs.map((x) => x.p99)),
      lagMax: median(rs.map((x) => x.max)),
      secs: median(rs.map((x) => x.secs)),
      mbps: median(rs.map((x) => x.mbps)),
    }
    log(`  ${row.name.padEnd(30)} lag p99 ${row.lagP99.toFixed(2)} ms (p50 ${row.lagP50.toFixed(2)}, max ${row.lagMax.toFixed(1)}), ${row.mbps.toFixed(0)} MB/s total`)
    return row
  })
  return { baseline, procs, perProcessBytes: PER_PROCESS, rows }
}
