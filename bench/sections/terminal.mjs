// 7: processes on a pseudo-terminal. procvisor (`spawn(cmd, { pty: true })`, output to an
// `onStdout` listener, as text) side by side with node-pty (`onData`, as text) and util-linux
// `script -q -c` under child_process (the terminal is script's; its copy of the output reaches
// Node through a pipe), contenders interleaved over rounds in a rotated order.
//
// - throughput: 100 MiB through the terminal (`stty raw -echo`, so every contender moves the same
//   bytes, then `head -c … /dev/zero | tr`), from the spawn until the exit is reported, with what
//   had reached JS by then. procvisor must deliver every byte (checked); for the others the bytes
//   missing when their exit was reported are counted (node-pty reports the exit before it has
//   read the terminal to its end).
// - latency: `true` on a terminal, from the spawn call until the exit is reported, one at a time.

import { spawn as cpSpawn } from 'node:child_process'
import { createRequire } from 'node:module'
import { performance } from 'node:perf_hooks'
import { procvisor, CHILD_ENV } from '../lib/setup.mjs'
import { median, p99, rotate } from '../lib/stats.mjs'

const now = () => performance.now()
const MiB = 1024 * 1024

function nodePty() {
  try {
    return createRequire(import.meta.url)('node-pty')
  } catch {
    return undefined
  }
}

function contenders(pm) {
  const list = []
  list.push({
    name: 'procvisor',
    run: async (cmd) => {
      let bytes = 0
      const h = await pm.spawn(cmd, { pty: true, maxRetainedBytes: 0, onStdout: (d) => (bytes += d.length) })
      await h.wait()
      return bytes
    },
  })
  // The Terminals API keeps the screen (a terminal emulator in Rust fed with every byte); no JS
  // reader here, so this is the cost of the screen on the output path.
  list.push({
    name: 'procvisor createTerminal (screen)',
    screen: true,
    run: async (cmd) => {
      const t = await pm.createTerminal({ command: ['/bin/sh', '-c', cmd] })
      await t.waitForExit()
      return (await t.getSnapshot()).lines
    },
  })
  const pty = nodePty()
  if (pty) {
    list.push({
      name: 'node-pty',
      run: (cmd) =>
        new Promise((resolve) => {
          let bytes = 0
          const p = pty.spawn('/bin/sh', ['-c', cmd], { cols: 80, rows: 24, env: { ...CHILD_ENV, TERM: 'xterm-256color' } })
          p.onData((d) => (bytes += d.length))
          p.onExit(() => resolve(bytes))
        }),
    })
  }
  list.push({
    name: 'script -q -c (child_process)',
    run: (cmd) =>
      new Promise((resolve, reject) => {
        let bytes = 0
        const c = cpSpawn('script', ['-q', '-e', '-c', cmd, '/dev/null'], { env: { ...CHILD_ENV, TERM: 'xterm-256color' }, stdio: ['pipe', 'pipe', 'inherit'] })
        c.stdout.setEncoding('latin1')
        c.stdout.on('data', (d) => (bytes += d.length))
        c.on('error', reject)
        c.on('close', () => resolve(bytes))
      }),
  })
  return list
}

/**
 * @returns { nodePty: boolean, rows: [{ name, mibPerSec, lostBytes, latP50, latP99 }] } (µs for
 * latencies; lostBytes summed over rounds).
 */
export async function terminalSection({ rounds, mib, latN, log }) {
  const { ProcessManager } = procvisor()
  const pm = new ProcessManager({ containment: 'process-group' })
  const list = contenders(pm)
  if (!nodePty()) log('   node-pty is not installed: compared with script -q -c only')
  const bulk = `stty raw -echo; head -c ${mib * MiB} /dev/zero | tr '\\0' x`
  const speed = new Map(list.map((c) => [c.name, []]))
  const lat = new Map(list.map((c) => [c.name, []]))
  const lost = new Map(list.map((c) => [c.name, 0]))
  try {
    for (let r = 0; r < rounds; r++) {
      for (const c of rotate(list, r)) {
        const a = now()
        let bytes = await c.run(bulk)
        const secs = (now() - a) / 1000
        // The screen shows the last rows of the output: full rows of x, the cursor after them.
        if (c.screen) bytes = bytes.slice(0, -1).every((l) => l === 'x'.repeat(80)) ? mib * MiB : 0
        if (bytes !== mib * MiB && c.name === 'procvisor') throw new Error(`procvisor delivered ${bytes} of ${mib * MiB} bytes`)
        lost.set(c.name, lost.get(c.name) + (mib * MiB - bytes))
        speed.get(c.name).push(mib / secs)
        log(`   ${c.name}: ${mib} MiB in ${secs.toFixed(2)} s${bytes === mib * MiB ? '' : `, ${mib * MiB - bytes} bytes missing at the exit`}`)
      }
      for (const c of rotate(list, r)) {
        for (let i = 0; i < latN; i++) {
          const a = now()
          await c.run('true')
          lat.get(c.name).push((now() - a) * 1000)
        }
      }
    }
  } finally {
    await pm.close()
  }
  return {
    nodePty: Boolean(nodePty()),
    rows: list.map((c) => ({
      name: c.name,
      mibPerSec: median(speed.get(c.name)),
      lostBytes: lost.get(c.name),
      latP50: median(lat.get(c.name)),
      latP99: p99(lat.get(c.name)),
    })),
  }
}
