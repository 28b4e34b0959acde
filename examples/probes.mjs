// examples/probes.mjs: a server whose health check fails is restarted; stop() ends it gently.
import { ProcessManager } from 'procvisor'

const port = Number(process.env.PORT || 3000)
const pm = new ProcessManager({ workingDirectory: '.' })

// /health answers 500 once /break was asked for; on SIGTERM the server closes, then exits.
const app = `let broken = false
const server = require('node:http').createServer((q, s) => {
  if (q.url === '/break') broken = true
  s.statusCode = q.url === '/health' && broken ? 500 : 200
  s.end()
}).listen(${port}, () => console.log('listening on ${port}'))
process.on('SIGTERM', () => { console.log('closing'); server.close(() => process.exit(0)) })`
const web = await pm.exec(['node', '-e', app], {
  readiness: { log: '/listening on \\d+/', periodMs: 100 }, // or { port }, { http: { port, path } }, { exec: argv }
  liveness: { http: { port, path: '/health' }, periodMs: 100, failureThreshold: 2 },
  restart: { policy: 'on-failure', backoffMs: { initial: 100 } },
  shutdown: { signal: 'SIGTERM', timeoutMs: 5_000 }, // how stop() and close() end it
})
const ready = async () => {
  while (!(await web.status()).ready) await new Promise((resolve) => setTimeout(resolve, 50))
}
await ready()
await fetch(`http://127.0.0.1:${port}/break`)

// Each verdict that changes is in the log; the failed liveness check ends the run, and the
// policy restarts it (exit 0 on SIGTERM or not: a run that failed its liveness probe failed).
for await (const e of await web.logs({ follow: true })) {
  if (e.type === 'probe') console.log(e.probe, e.ok ? 'passed' : `failed: ${e.reason}`)
  if (e.type === 'restart') break
}
await ready() // the next run proves itself again
console.log('restarts', (await web.status()).restarts)

const exit = await web.stop() // SIGTERM, which it handles; SIGKILL only after 5 s
console.log('stopped with code', exit.code, (await web.output({ encoding: 'utf8' })).stdout.includes('closing'))
await pm.close()
