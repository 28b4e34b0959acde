// Probe: spawn-until-exit throughput and the JS thread's CPU per spawn (process.threadCpuUsage,
// Node >= 22.19), one at a time and 16 in flight, for one or more copies of the package.
//   node bench/probes/spawn-cpu.mjs [packageRoot ...]     (default: this checkout)
import { createRequire } from 'node:module'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { performance } from 'node:perf_hooks'

const require = createRequire(import.meta.url)
const here = path.dirname(fileURLToPath(import.meta.url))
const roots = process.argv.slice(2).length ? process.argv.slice(2) : [path.resolve(here, '../..')]
const now = () => performance.now()
const jsCpu = () => {
  const u = process.threadCpuUsage()
  return u.user + u.system
}
const managers = roots.map((r) => [r, new (require(r).ProcessManager)()])

for (let round = 0; round < 3; round++) {
  for (const inflight of [1, 16]) {
    for (const [name, pm] of managers) {
      for (const form of ['exec', 'spawn']) {
        const n = inflight === 1 ? 300 : 800
        let started = 0
        const worker = async () => {
          while (started < n) {
            started++
            if (form === 'exec') await (await pm.exec(['/bin/true'])).exitCode
            else {
              const h = await pm.spawn('true')
              await h.wait()
              pm.release(h.pid)
            }
          }
        }
        const c0 = jsCpu()
        const t0 = now()
        await Promise.all(Array.from({ length: inflight }, worker))
        const secs = (now() - t0) / 1000
        console.log(`round ${round} ${String(inflight).padStart(2)} in flight ${name.padEnd(24)} ${form.padEnd(5)} ${(n / secs).toFixed(0).padStart(5)}/s, JS thread CPU ${((jsCpu() - c0) / n).toFixed(0)} µs/spawn`)
      }
    }
  }
}
for (const [, pm] of managers) await pm.close()
