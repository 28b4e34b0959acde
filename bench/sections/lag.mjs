// 5b: event-loop lag while 50 processes stream output at once (each `head -c 20000000 /dev/zero`
// through the contender's output callback). Lag is sampled with a 1 ms timer chain: each sample is
// how late the timer fired. The baseline is the same sampler on an idle loop. Each contender runs
// in its own Node process (bench/children/contender-worker.mjs), rounds interleaved from here.

import { outputContenders } from '../lib/contenders.mjs'
import { lagSampler } from '../lib/trials.mjs'
import { openWorkers } from '../lib/workers.mjs'
import { median, p99, rotate } from '../lib/stats.mjs'

const PER_PROCESS = 20_000_000

/** @returns { baseline: {p50, p99}, procs, perProcessBytes, rows: [{ name, procvisor, lagP50, lagP99, lagMax, samples, secs, mbps, lostBytes }], leftBehind } */
export async function lagSection({ rounds, procs, mastra, log }) {
  const stopIdle = lagSampler()
  await new Promise((r) => setTimeout(r, 500))
  const idle = stopIdle()
  const baseline = { p50: median(idle), p99: p99(idle) }
  log(`  idle loop: lag p50 ${baseline.p50.toFixed(3)} ms, p99 ${baseline.p99.toFixed(3)} ms`)
  const contenders = outputContenders({ sandbox: mastra }, { reader: false }).filter((c) => !c.limit)
  const workers = await openWorkers(contenders.map((c) => c.name))
  const acc = new Map(contenders.map((c) => [c, []]))
  let leftBehind
  try {
    for (let r = 0; r < rounds; r++) {
      for (const c of rotate(contenders, r)) acc.get(c).push(await workers.call(c.name, { op: 'lag', procs, bytesEach: PER_PROCESS }))
    }
  } finally {
    leftBehind = await workers.close()
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
      samples: median(rs.map((x) => x.samples)),
      lostBytes: Math.max(...rs.map((x) => x.lost)),
    }
    log(`  ${row.name.padEnd(30)} lag p99 ${row.lagP99.toFixed(2)} ms (p50 ${row.lagP50.toFixed(2)}, max ${row.lagMax.toFixed(1)}), ${row.mbps.toFixed(0)} MB/s total, ${row.samples} lag samples${row.lostBytes ? `, LOST ${row.lostBytes} bytes` : ''}`)
    return row
  })
  return { baseline, procs, perProcessBytes: PER_PROCESS, rows, leftBehind }
}
