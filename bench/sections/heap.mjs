// 3: spawn latency with the parent idle, at ~2 GiB and at ~6 GiB of Buffers. Each size is a Node
// process of its own (bench/children/heap-child.mjs), alive for the whole section; the sizes are
// driven in turn, in rounds (rotated order), so that the noise of a shared machine falls on all
// sizes alike: the target is a ratio between sizes. procvisor's two faces share their processes;
// child_process gets processes of its own, after them, because its forks would leave the other
// contenders' parent write-protected (see heap-child.mjs). At most one group's processes are
// alive at once (2 + 6 GiB).

import { fork } from 'node:child_process'
import path from 'node:path'
import { BENCH } from '../lib/setup.mjs'
import { median, p99, rotate } from '../lib/stats.mjs'

/** The heap child for `gib` and `group`, once it has allocated: { ready info, call(msg) }. */
function open(gib, group) {
  return new Promise((resolve, reject) => {
    const child = fork(path.join(BENCH, 'children', 'heap-child.mjs'), [String(gib), group], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] })
    const pending = new Map()
    let seq = 0
    const timer = setTimeout(() => {
      child.kill('SIGKILL')
      reject(new Error(`heap child (${gib} GiB, ${group}) not ready after 120 s`))
    }, 120_000)
    child.on('message', (m) => {
      if (m.ready) {
        clearTimeout(timer)
        const call = (msg) =>
          new Promise((res, rej) => {
            const id = ++seq
            pending.set(id, { resolve: res, reject: rej })
            child.send({ ...msg, id })
          })
        return resolve({ gib, ...m, call })
      }
      const p = pending.get(m.id)
      if (!p) return
      pending.delete(m.id)
      if (m.error !== undefined) p.reject(new Error(`heap child (${gib} GiB): ${m.error}`))
      else p.resolve(m.result)
    })
    child.on('error', reject)
    child.on('exit', (code) => {
      clearTimeout(timer)
      reject(new Error(`heap child (${gib} GiB, ${group}) exited (${code}) before it was ready`))
      for (const p of pending.values()) p.reject(new Error(`heap child (${gib} GiB, ${group}) exited (${code})`))
      pending.clear()
    })
  })
}

/**
 * Launches per size for a group: child_process gets each size's own `n` (a launch from a 6 GiB
 * parent costs it 0.1 s); procvisor gets the largest `n` at every size. A batch's first launch
 * finds our threads parked (the IPC message, not a launch, came before it) and takes about 1.5
 * times as long: with 3 launches per batch at 6 GiB against 15 at 0 GiB, the 6 GiB median
 * carried five times the share of those (measured at 0 GiB alone: p50 0.72-0.73 ms in batches
 * of 3, 0.67-0.69 ms in batches of 15). Equal batches leave the heap as the only difference.
 */
function launchesPerSize(name, sizes) {
  const most = Math.max(...sizes.map((s) => s.n))
  return sizes.map((s) => (name === 'procvisor' ? most : s.n))
}

/** One group at every size: { gib → { allocSecs, rssMiB, results } }. */
async function group(name, sizes, rounds) {
  const children = []
  const per = launchesPerSize(name, sizes)
  try {
    // One at a time: allocating several GiB at once on a small machine would only slow each other.
    for (const { gib } of sizes) children.push(await open(gib, name))
    const lat = children.map((c) => Object.fromEntries(c.names.map((n) => [n, []])))
    const sync = children.map((c) => Object.fromEntries(c.names.map((n) => [n, []])))
    for (let r = 0; r < rounds; r++) {
      for (const i of rotate(children.map((_, i) => i), r)) {
        const k = Math.ceil(per[i] / rounds)
        const got = await children[i].call({ op: 'batch', k })
        for (const n of children[i].names) {
          lat[i][n].push(...got.lat[n])
          sync[i][n].push(...got.sync[n])
        }
      }
    }
    return children.map((c, i) => ({
      allocSecs: c.allocSecs,
      rssMiB: c.rssMiB,
      results: c.names.map((n) => ({ name: n, latP50: median(lat[i][n]), latP99: p99(lat[i][n]), syncP50: median(sync[i][n]), syncP99: p99(sync[i][n]) })),
    }))
  } finally {
    await Promise.all(children.map((c) => c.call({ op: 'close' }).catch(() => {})))
  }
}

/** @returns [{ gib, n, allocSecs, rssMiB, results: [{ name, latP50, latP99, syncP50, syncP99 }] }] */
export async function heapSection({ sizes, rounds = 10, log }) {
  const pv = await group('procvisor', sizes, rounds)
  const cp = await group('child_process', sizes, rounds)
  const pvN = launchesPerSize('procvisor', sizes)
  const out = sizes.map(({ gib, n }, i) => ({
    gib,
    n: Math.ceil(n / rounds) * rounds,
    nProcvisor: Math.ceil(pvN[i] / rounds) * rounds,
    allocSecs: pv[i].allocSecs,
    rssMiB: Math.max(pv[i].rssMiB, cp[i].rssMiB),
    results: [...pv[i].results, ...cp[i].results],
  }))
  for (const r of out) {
    for (const x of r.results) log(`  ${String(r.gib).padStart(2)} GiB (rss ${r.rssMiB} MiB) ${x.name.padEnd(26)} latency p50 ${(x.latP50 / 1000).toFixed(2)} ms, spawn call p50 ${(x.syncP50 / 1000).toFixed(3)} ms`)
  }
  return out
}
