// 4: output throughput to JS. 1 GiB of `head -c` through callbacks and readers, and many short
// lines (two producers: `yes | head`, which writes 4 KiB blocks, and awk with fflush() after every
// line, one write per line: the per-chunk overhead). MB/s from the spawn call to the end of
// output, and the CPU seconds this Node process spent (all threads: JS, libuv, procvisor's
// runtime), which is the reader's cost; the limit reports its own (getrusage).

import { performance } from 'node:perf_hooks'
import { outputContenders } from '../lib/contenders.mjs'
import { runLimit } from '../lib/setup.mjs'
import { median, rotate } from '../lib/stats.mjs'

const now = () => performance.now()

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

function shellQuote(a) {
  return /^[\w@%+=:,./-]+$/.test(a) ? a : `'${a.replace(/'/g, `'\\''`)}'`
}

async function once(c, w) {
  if (c.limit) {
    const j = await runLimit(['pipe', ...w.argv])
    return { bytes: j.bytes, secs: j.secs, cpu: j.cpuUser + j.cpuSys }
  }
  const command = w.argv[0] === '/bin/sh' ? w.argv[2] : w.argv.map(shellQuote).join(' ')
  const c0 = process.cpuUsage()
  const t0 = now()
  const bytes = await c.run(command, w.argv)
  const secs = (now() - t0) / 1000
  const u = process.cpuUsage(c0)
  return { bytes, secs, cpu: (u.user + u.system) / 1e6 }
}

/** @returns rows: { workload, name, procvisor, limit, mbps, secs, cpu, ok } (medians over rounds) */
export async function outputSection(ctx, { rounds, workloads, log }) {
  const rows = []
  for (const key of workloads) {
    const w = WORKLOADS[key]
    const contenders = outputContenders(ctx, { tinyexecLines: key !== 'bulk' })
    const acc = new Map(contenders.map((c) => [c, []]))
    for (let r = 0; r < rounds; r++) {
      for (const c of rotate(contenders, r)) {
        let res
        try {
          res = await once(c, w)
        } catch (e) {
          res = { error: e.message.split('\n')[0] }
        }
        acc.get(c).push(res)
        if (typeof global.gc === 'function') global.gc()
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
      }
      rows.push(row)
      log(`  ${key.padEnd(8)} ${row.name.padEnd(30)} ${row.mbps === undefined ? 'FAILED' : `${row.mbps.toFixed(0).padStart(5)} MB/s  cpu ${row.cpu.toFixed(2)} s`}${row.problem ? `  (${row.problem})` : ''}`)
    }
  }
  return rows
}
