// 3: spawn latency with the parent idle, at ~2 GiB and at ~6 GiB of Buffers, each size in fresh
// Node processes (bench/children/heap-child.mjs): one for procvisor's two faces, interleaved, and
// one for child_process, whose forks would otherwise leave the other contenders' parent
// write-protected (see heap-child.mjs).

import { execFile } from 'node:child_process'
import path from 'node:path'
import { BENCH } from '../lib/setup.mjs'

function child(gib, n, group) {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [path.join(BENCH, 'children', 'heap-child.mjs'), String(gib), String(n), group], { maxBuffer: 1 << 20, timeout: 120_000 }, (err, stdout, stderr) => {
      if (err) return reject(new Error(`heap child (${gib} GiB) failed: ${err.message}\n${stderr}`))
      resolve(JSON.parse(stdout.trim().split('\n').pop()))
    })
  })
}

/** @returns [{ gib, n, allocSecs, rssMiB, results: [{ name, latP50, latP99, syncP50, syncP99 }] }] */
export async function heapSection({ sizes, log }) {
  const out = []
  for (const { gib, n } of sizes) {
    const pv = await child(gib, n, 'procvisor')
    const cp = await child(gib, n, 'child_process')
    const r = { ...pv, rssMiB: Math.max(pv.rssMiB, cp.rssMiB), results: [...pv.results, ...cp.results] }
    out.push(r)
    for (const x of r.results) log(`  ${String(gib).padStart(2)} GiB (rss ${r.rssMiB} MiB) ${x.name.padEnd(26)} latency p50 ${(x.latP50 / 1000).toFixed(2)} ms, spawn call p50 ${(x.syncP50 / 1000).toFixed(3)} ms`)
  }
  return out
}
