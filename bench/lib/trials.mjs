// One measured trial of each kind, run inside the process of the contender being measured
// (bench/children/contender-worker.mjs): process.cpuUsage() then counts only that contender.

import { performance } from 'node:perf_hooks'
import { median, p99, quantile } from './stats.mjs'

const now = () => performance.now()

function shellQuote(a) {
  return /^[\w@%+=:,./-]+$/.test(a) ? a : `'${a.replace(/'/g, `'\\''`)}'`
}

/** Streams `argv`'s stdout through contender `c` once: { bytes, secs, cpu }. */
export async function outputTrial(c, argv) {
  const command = argv[0] === '/bin/sh' ? argv[2] : argv.map(shellQuote).join(' ')
  const c0 = process.cpuUsage()
  const t0 = now()
  const bytes = await c.run(command, argv)
  const secs = (now() - t0) / 1000
  const u = process.cpuUsage(c0)
  return { bytes, secs, cpu: (u.user + u.system) / 1e6 }
}

/** A 1 ms timer chain; stop() returns how late each tick fired (ms). */
export function lagSampler() {
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

/** `procs` processes of `bytesEach` each through contender `c` at once, lag sampled meanwhile. */
export async function lagTrial(c, procs, bytesEach) {
  const argv = ['head', '-c', String(bytesEach), '/dev/zero']
  const stop = lagSampler()
  const t0 = now()
  const got = await Promise.all(Array.from({ length: procs }, () => c.run(argv.join(' '), argv)))
  const secs = (now() - t0) / 1000
  const lags = stop()
  const bytes = got.reduce((a, b) => a + b, 0)
  return { p50: median(lags), p99: p99(lags), max: quantile(lags, 1), samples: lags.length, secs, mbps: bytes / 1e6 / secs, lost: procs * bytesEach - bytes }
}
