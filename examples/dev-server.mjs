// examples/dev-server.mjs: a dev server that crashes is restarted, with backoff, on the same handle.
import { ProcessManager } from 'procvisor'

const port = Number(process.env.PORT || 3000)
const pm = new ProcessManager({ workingDirectory: '.' })

// A server that crashes (exit 1) after its first answer, as a dev server might on a bad edit.
const app = `require('node:http').createServer((q, s) => s.end('ok', () => process.exit(1))).listen(${port})`
const dev = await pm.exec(['node', '-e', app], {
  restart: { policy: 'on-failure', maxRestarts: 5, backoffMs: { initial: 100, max: 30_000, factor: 2 }, resetAfterMs: 60_000 },
})
await dev.waitForPort(port, { timeout: 60_000 })
console.log(await (await fetch(`http://127.0.0.1:${port}/`)).text()) // answers, then crashes

// The log says when: a `restart` event between two runs. 100 ms later the next run starts.
for await (const e of await dev.logs({ follow: true })) {
  if (e.type === 'restart') {
    console.log(`restart ${e.attempt} after exit ${e.exit.code}`)
    break
  }
}
await dev.waitForPort(port, { timeout: 60_000 }) // the same handle, the same port, a new pid
const { state, restarts, lastExit } = await dev.status() // state: 'running' | 'backoff' | 'exited'
console.log(state, restarts, lastExit.code)

await dev.kill() // ends the service for good: no restart after a kill
const exit = await dev.waitForExit() // the last run's exit, with the count
console.log('ended', exit.signal, exit.restarts)
await pm.close()
