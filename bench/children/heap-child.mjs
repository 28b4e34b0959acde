// 3: spawn latency with a big parent. Forked by bench/sections/heap.mjs as
// `heap-child.mjs <GiB> <procvisor|child_process>`: allocates <GiB> of Buffers (off the V8 heap,
// but in this process's address space, every page touched), says it is ready, then answers
//   { op: 'batch', k } → { lat: { name: [µs] }, sync: { name: [µs] } }: k launches of `/bin/true`
//                        per contender of its group, interleaved
//   { op: 'close' }    → {}, then exits
// The section drives the processes of every size in turn, round after round, so that a burst of
// stolen CPU on a shared machine falls on all sizes alike instead of on one size's whole run.
// fork() copies the parent's page tables, so child_process.spawn slows down as the parent grows;
// posix_spawn (CLONE_VM | CLONE_VFORK) does not. A fork also write-protects every page of the
// parent, which then faults on its next write to each: in one process with child_process, a
// procvisor spawn took 20-48 minor faults against 1-2 alone, and at 6 GiB its latency rose with
// them. Hence one process per group: each contender pays only for its own launches.

import cp from 'node:child_process'
import { performance } from 'node:perf_hooks'
import { CHILD_ENV, procvisor } from '../lib/setup.mjs'

const now = () => performance.now()
const gib = Number(process.argv[2])

const { ProcessManager } = procvisor()
const pm = new ProcessManager()
const group = process.argv[3]
if (group !== 'procvisor' && group !== 'child_process') throw new Error(`heap-child.mjs <GiB> <procvisor|child_process>: got ${group}`)

const all = [
  {
    name: 'procvisor exec(argv)',
    async run() {
      const a = now()
      const p = pm.exec(['/bin/true'])
      const sync = now() - a
      await (await p).exitCode
      return sync
    },
  },
  {
    name: "procvisor spawn('true')",
    async run() {
      const a = now()
      const p = pm.spawn('true')
      const sync = now() - a
      const h = await p
      await h.wait()
      pm.release(h.pid)
      return sync
    },
  },
  {
    name: 'child_process.spawn',
    run: () =>
      new Promise((resolve, reject) => {
        const a = now()
        const c = cp.spawn('/bin/true', [], { env: CHILD_ENV })
        const sync = now() - a
        c.on('error', reject)
        c.on('close', () => resolve(sync))
      }),
  },
]

const contenders = all.filter((c) => (group === 'procvisor') === c.name.startsWith('procvisor'))
for (const c of contenders) for (let i = 0; i < 5; i++) await c.run()

const keep = []
const tAlloc = now()
let left = gib * 2 ** 30
while (left > 0) {
  const size = Math.min(left, 256 * 2 ** 20)
  const b = Buffer.allocUnsafeSlow(size)
  b.fill(1)
  keep.push(b)
  left -= size
}
const allocSecs = (now() - tAlloc) / 1000

process.on('message', async (m) => {
  try {
    if (m.op === 'close') {
      await pm.close()
      keep.length = 0
      process.send({ id: m.id, result: {} }, () => process.exit(0))
      return
    }
    if (m.op !== 'batch') throw new Error(`unknown op ${m.op}`)
    const lat = Object.fromEntries(contenders.map((c) => [c.name, []]))
    const sync = Object.fromEntries(contenders.map((c) => [c.name, []]))
    for (let i = 0; i < m.k; i++) {
      for (const c of contenders) {
        const a = now()
        const s = await c.run()
        lat[c.name].push((now() - a) * 1000)
        sync[c.name].push(s * 1000)
      }
    }
    process.send({ id: m.id, result: { lat, sync } })
  } catch (e) {
    process.send({ id: m.id, error: String(e && e.message ? e.message : e).split('\n')[0] })
  }
})
process.send({ ready: true, allocSecs, rssMiB: Math.round(process.memoryUsage().rss / 2 ** 20), names: contenders.map((c) => c.name) })
