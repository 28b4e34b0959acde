// 4: output throughput to JS. 1 GiB of `head -c` through callbacks and readers, and many short
// lines (two producers: `yes | head`, which writes 4 KiB blocks, and awk with fflush() after every
// line, one write per line: the per-chunk overhead). MB/s from the spawn call to the end of
// output, and the CPU seconds the contender's Node process spent (all threads: JS, libuv,
// procvisor's runtime), which is the reader's cost; the limit reports its own (getrusage).

import { outputContenders } from '../lib/contenders.mjs'
import { openWorkers } from '../lib/workers.mjs'
import { runLimit } from '../lib/setup.mjs'
import { median, rotate } from '../lib/stats.mjs'


export const WORKLOADS = {
  bulk: {
    title: '1 GiB of zeros (`head -c 1073741824 /dev/zero`)',
    argv: ['head', '-c', '1073741824', '/dev/zero'],
    bytes: 1073741824,
  },
  yes: {
    title: 'short lines in 4 KiB writes (`yes | head -n 20000000`, 40 MB)',
    argv: ['/bin/sh', '-c', 'yes | head -n 20000000'],
    bytes: 40000000,
  },
  perLine: {
    title: 'one write per line (awk + fflush, 300,000 lines of 16 bytes)',
    argv: ['awk', 'BEGIN { for (i = 100000; i < 400000; i++) { print "log line " i; fflush() } }'],
    bytes: 300000 * 16,
  },
}

async function once(workers, c, w) {
  if (c.limit) {
    const j = await runLimit(['pipe', ...w.argv])
    return { bytes: j.bytes, secs: j.secs, cpu: j.cpuUser + j.cpuSys }
  }
  return workers.call(c.name, { op: 'output', argv: w.argv })
}

/**
 * Each contender runs in its own Node process (bench/children/contender-worker.mjs), driven in
 * interleaved rounds from here.
 * @returns { rows: [{ workload, name, procvisor, limit, mbps, secs, cpu, runs, ok, problem }], leftBehind }
 */
export async function outputSection({ rounds, workloads, mastra, log }) {
  const rows = []
  const names = outputContenders({ sandbox: mastra }, { tinyexecLines: true }).filter((c) => !c.limit).map((c) => c.name)
  const workers = await openWorkers(names)
  try {
    for (const key of workloads) {
      const w = WORKLOADS[key]
      // tinyexec streams only line by line (readline): 20 M lines take it ~13 s, so only the per-line workload.
      const contenders = outputContenders({ sandbox: mastra }, { tinyexecLines: key === 'perLine' })
      const acc = new Map(contenders.map((c) => [c, []]))
      for (let r = 0; r < rounds; r++) {
        for (const c of rotate(contenders, r)) {
          let res
          try {
            res = await once(workers, c, w)
          } catch (e) {
            res = { error: e.message.split('\n')[0] }
          }
          acc.get(c).push(res)
          if (process.env.BENCH_VERBOSE) log(`    round ${r} ${key} ${c.name}: ${res.error ? res.error : `${(res.bytes / 1e6 / res.secs).toFixed(0)} MB/s, cpu ${res.cpu.toFixed(2)} s`}`)
        }
      }
      for (const c of contenders) {
        const rs = acc.get(c)
        const good = rs.filter((x) => !x.error && x.bytes === w.bytes)
        const bad = rs.find((x) => x.error || x.bytes !== w.bytes)
        const row = {
          workload: key,
          name: c.name,
          procvisor: Boolean(c.procvisor),
          limit: Boolean(c.limit),
          runs: rs.length,
          ok: good.length,
          problem: bad ? bad.error || `got ${bad.bytes} of ${w.bytes} bytes` : undefined,
          mbps: good.length ? median(good.map((x) => x.bytes / 1e6 / x.secs)) : undefined,
          secs: good.length ? median(good.map((x) => x.secs)) : undefined,
          cpu: good.length ? median(good.map((x) => x.cpu)) : undefined,
          // Per round, in round order (NaN for a failed round), for per-round ratios.
          mbpsRounds: rs.map((x) => (x.error || x.bytes !== w.bytes ? NaN : x.bytes / 1e6 / x.secs)),
          cpuRounds: rs.map((x) => (x.error || x.bytes !== w.bytes ? NaN : x.cpu)),
        }
        rows.push(row)
        log(`  ${key.padEnd(8)} ${row.name.padEnd(30)} ${row.mbps === undefined ? 'FAILED' : `${row.mbps.toFixed(0).padStart(5)} MB/s  cpu ${row.cpu.toFixed(2)} s`}${row.problem ? `  (${row.problem})` : ''}`)
      }
    }
  } finally {
    rows.leftBehind = await workers.close()
  }
  return { rows, leftBehind: rows.leftBehind }
}
