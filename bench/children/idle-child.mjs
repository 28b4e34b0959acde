// 5a: memory per tracked idle process. Run as `node --expose-gc idle-child.mjs <contender> <n> <tag>`
// in a fresh Node process: spawns n `sleep <tag>` (tag is a duration such as 60.0042, unique per
// run, so leftovers can be found), measures RSS before and after (GC'd, settled), kills them all
// through the contender's own API, checks that none is left, and prints one JSON line.

import cp from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { CHILD_ENV, findProcesses, procvisor, sleep } from '../lib/setup.mjs'

const [key, nArg, tag] = process.argv.slice(2)
const n = Number(nArg)
const gc = () => {
  global.gc()
  global.gc()
}

async function contender() {
  switch (key) {
    case 'procvisor-exec':
    case 'procvisor-spawn': {
      const { ProcessManager } = procvisor()
      const pm = new ProcessManager()
      const start = key === 'procvisor-exec' ? (arg) => pm.exec(['sleep', arg]) : (arg) => pm.spawn(`sleep ${arg}`)
      return { start, killAll: () => pm.close() }
    }
    case 'child_process': {
      const kids = []
      return {
        start: (arg) =>
          new Promise((resolve, reject) => {
            const c = cp.spawn('sleep', [arg], { env: CHILD_ENV })
            c.once('spawn', () => resolve(c))
            c.once('error', reject)
            kids.push(c)
          }),
        killAll: () =>
          Promise.all(
            kids.map((c) => new Promise((r) => (c.exitCode !== null || c.signalCode !== null ? r() : (c.once('close', r), c.kill('SIGKILL'))))),
          ),
      }
    }
    case 'execa': {
      const { execa } = await import('execa')
      const kids = []
      return {
        start: async (arg) => {
          const p = execa('sleep', [arg], { env: CHILD_ENV, extendEnv: false, reject: false })
          kids.push(p)
          await new Promise((r) => p.once('spawn', r))
          // Not `return p`: the subprocess is a thenable, and an async function would wait for it.
          return { p }
        },
        killAll: () => Promise.all(kids.map((p) => (p.kill('SIGKILL'), p))),
      }
    }
    case 'tinyexec': {
      const { x } = await import('tinyexec')
      const kids = []
      return {
        start: async (arg) => {
          const p = x('sleep', [arg], { nodeOptions: { env: CHILD_ENV }, inheritEnv: false })
          kids.push(p)
          await new Promise((r) => p.process.once('spawn', r))
          return { p } // a thenable too
        },
        killAll: () => Promise.all(kids.map((p) => (p.kill('SIGKILL'), p.then(() => {}, () => {})))),
      }
    }
    case 'mastra': {
      const { LocalSandbox } = await import('@mastra/core/workspace')
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'procvisor-bench-mastra-'))
      const sandbox = new LocalSandbox({ workingDirectory: dir, env: {} })
      const handles = []
      return {
        start: async (arg) => {
          const h = await sandbox.processes.spawn(`sleep ${arg}`)
          handles.push(h)
          return h
        },
        killAll: async () => {
          await Promise.all(handles.map(async (h) => (await h.kill(), await h.wait())))
          await sandbox.destroy().catch(() => {})
          fs.rmSync(dir, { recursive: true, force: true })
        },
      }
    }
    default:
      throw new Error(`unknown contender ${key}`)
  }
}

const c = await contender()
// Warm up: load everything lazily loaded, start runtimes and threads, with short sleeps.
const warm = []
for (let i = 0; i < 5; i++) warm.push(await c.start('0.01'))
await sleep(300)
gc()
await sleep(100)
gc()
const rssBefore = process.memoryUsage().rss
const t0 = performance.now()
for (let i = 0; i < n; i++) await c.start(tag)
const spawnSecs = (performance.now() - t0) / 1000
await sleep(500)
gc()
await sleep(100)
gc()
const rssAfter = process.memoryUsage().rss
const live = findProcesses(['sleep', tag]).length
await c.killAll()
let left = findProcesses(['sleep', tag])
for (let i = 0; i < 50 && left.length > 0; i++) {
  await sleep(20)
  left = findProcesses(['sleep', tag])
}
process.stdout.write(JSON.stringify({ key, n, rssBefore, rssAfter, perProcessBytes: (rssAfter - rssBefore) / n, spawnSecs, live, leftAfterKill: left.length }) + '\n')
for (const pid of left) {
  try {
    process.kill(pid, 'SIGKILL')
  } catch {}
}
process.exit(0)
