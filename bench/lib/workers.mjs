// A pool of contender processes (bench/children/contender-worker.mjs), one per contender name.

import { fork } from 'node:child_process'
import path from 'node:path'
import { BENCH } from './setup.mjs'

export async function openWorkers(names) {
  const workers = new Map()
  let seq = 0
  await Promise.all(
    names.map(
      (name) =>
        new Promise((resolve, reject) => {
          const child = fork(path.join(BENCH, 'children', 'contender-worker.mjs'), [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] })
          const pending = new Map()
          child.on('message', (m) => {
            if (m.ready) return resolve()
            const p = pending.get(m.id)
            if (!p) return
            pending.delete(m.id)
            if (m.error !== undefined) p.reject(new Error(m.error))
            else p.resolve(m.result)
          })
          child.on('error', reject)
          child.on('exit', (code) => {
            for (const p of pending.values()) p.reject(new Error(`worker for ${name} exited (${code})`))
            pending.clear()
          })
          const call = (msg) =>
            new Promise((res, rej) => {
              const id = ++seq
              pending.set(id, { resolve: res, reject: rej })
              child.send({ ...msg, id })
            })
          workers.set(name, { call, child })
        }),
    ),
  )
  return {
    call: (name, msg) => workers.get(name).call({ ...msg, name }),
    /** Closes every worker; resolves with what they found left alive (and killed). */
    async close() {
      const left = []
      for (const w of workers.values()) {
        try {
          left.push(...(await w.call({ op: 'close' })).leftBehind)
        } catch {
          w.child.kill('SIGKILL')
        }
      }
      return left
    },
  }
}
