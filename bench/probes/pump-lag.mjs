// Probe: 50 processes streaming 20 MB each through procvisor's onStdout, for one or more copies of
// the package (e.g. a patched one), and child_process for reference: event-loop lag (1 ms timer
// chain), CPU of this process, and bytes that never reached the listener.
//   node bench/probes/pump-lag.mjs [packageRoot ...]     (default: this checkout)
import cp from 'node:child_process'
import { createRequire } from 'node:module'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { performance } from 'node:perf_hooks'

const require = createRequire(import.meta.url)
const here = path.dirname(fileURLToPath(import.meta.url))
const roots = process.argv.slice(2).length ? process.argv.slice(2) : [path.resolve(here, '../..')]
const PROCS = 50
const BYTES = 20_000_000
const now = () => performance.now()
const q = (a, p) => {
  const s = [...a].sort((x, y) => x - y)
  return s[Math.min(s.length - 1, Math.round((s.length - 1) * p))]
}
const managers = roots.map((r) => [r, new (require(r).ProcessManager)()])

async function viaProcvisor(pm) {
  let n = 0
  const h = await pm.spawn(`head -c ${BYTES} /dev/zero`, { onStdout: (s) => (n += s.length), maxRetainedBytes: 0, stdinMode: 'ignore' })
  await h.wait()
  pm.release(h.pid)
  return n
}
function viaChildProcess() {
  return new Promise((resolve) => {
    let n = 0
    const c = cp.spawn('head', ['-c', String(BYTES), '/dev/zero'], { stdio: ['ignore', 'pipe', 'pipe'] })
    c.stdout.on('data', (d) => (n += d.length))
    c.on('close', () => resolve(n))
  })
}

for (let round = 0; round < 2; round++) {
  for (const [name, run] of [...managers.map(([r, pm]) => [r, () => viaProcvisor(pm)]), ['child_process', viaChildProcess]]) {
    const lags = []
    let last = now()
    let timer
    const tick = () => {
      const t = now()
      lags.push(t - last - 1)
      last = t
      timer = setTimeout(tick, 1)
    }
    timer = setTimeout(tick, 1)
    const c0 = process.cpuUsage()
    const t0 = now()
    const got = await Promise.all(Array.from({ length: PROCS }, run))
    const secs = (now() - t0) / 1000
    const u = process.cpuUsage(c0)
    clearTimeout(timer)
    const lost = PROCS * BYTES - got.reduce((a, b) => a + b, 0)
    console.log(
      `${name.padEnd(28)} ${secs.toFixed(2)} s, cpu ${((u.user + u.system) / 1e6).toFixed(2)} s, lag p50 ${q(lags, 0.5).toFixed(1)} p99 ${q(lags, 0.99).toFixed(1)} max ${q(lags, 1).toFixed(0)} ms (${lags.length} samples)${lost ? `, LOST ${lost} bytes` : ''}`,
    )
  }
}
for (const [, pm] of managers) await pm.close()
