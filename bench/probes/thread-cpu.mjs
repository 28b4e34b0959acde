// Probe: CPU per spawn of each thread of this Node process (from /proc/self/task/*/schedstat),
// for `exec(['/bin/true'])` until exit, `inflight` at a time. It tells the JS thread's cost from
// the runtime's, which process-wide CPU figures mix.
//   node bench/probes/thread-cpu.mjs [packageRoot] [inflight=16] [n=3000]
import fs from 'node:fs'
import { createRequire } from 'node:module'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const require = createRequire(import.meta.url)
const here = path.dirname(fileURLToPath(import.meta.url))
const root = path.resolve(process.argv[2] || path.join(here, '../..'))
const inflight = Number(process.argv[3] || 16)
const n = Number(process.argv[4] || 3000)
const pm = new (require(root).ProcessManager)()

/** tid → [thread name, ns on CPU so far] */
function threads() {
  const out = {}
  for (const tid of fs.readdirSync('/proc/self/task')) {
    try {
      const name = fs.readFileSync(`/proc/self/task/${tid}/comm`, 'utf8').trim()
      out[tid] = [name, Number(fs.readFileSync(`/proc/self/task/${tid}/schedstat`, 'utf8').split(' ')[0])]
    } catch {} // a thread that ended in between
  }
  return out
}

async function run(count) {
  let started = 0
  const worker = async () => {
    while (started++ < count) await (await pm.exec(['/bin/true'])).exitCode
  }
  await Promise.all(Array.from({ length: inflight }, worker))
}

await run(300) // warm-up: JIT, the runtime's threads, the cgroup pool
const before = threads()
const t0 = performance.now()
await run(n)
const secs = (performance.now() - t0) / 1000
const byName = {}
for (const [tid, [name, ns]] of Object.entries(threads())) {
  byName[name] = (byName[name] || 0) + ns - (before[tid] ? before[tid][1] : 0)
}
const parts = Object.entries(byName)
  .filter(([, ns]) => ns > 0)
  .map(([name, ns]) => `${name} ${(ns / 1000 / n).toFixed(1)} µs`)
console.log(`${inflight} in flight: ${(n / secs).toFixed(0)} spawns/s; CPU per spawn: ${parts.join(', ')}`)
await pm.close()
