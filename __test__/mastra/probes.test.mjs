// Probes and shutdown on the Mastra face: `sandbox.processes.spawn(cmd, { readiness, liveness,
// shutdown })` on both procvisor backends (a persistent sandbox's supervisor runs the probes), the
// process ended through its shutdown by its own stop() and when the sandbox stops.
import { it } from 'node:test'
import assert from 'node:assert/strict'
import * as fs from 'node:fs'
import * as path from 'node:path'
import { InvalidProcessOptionError } from 'procvisor'
import { describeBackends, perTest } from './backends.mjs'
import { eventually, freePort } from './helpers.mjs'

async function collect(stream) {
  const events = []
  for await (const e of stream) events.push(e)
  return events
}

/** A server that writes `said` when SIGTERM asks it to end, then exits 0. */
function server(port, said) {
  const code = `const s = require('node:http').createServer((q, r) => r.end('ok')).listen(${port}, '127.0.0.1'); process.on('SIGTERM', () => { require('node:fs').writeFileSync(${JSON.stringify(said)}, 'SIGTERM'); s.close(() => process.exit(0)) })`
  return `exec ${JSON.stringify(process.execPath)} -e ${JSON.stringify(code)}`
}

describeBackends('probes and shutdown on the Mastra face', ['native', 'persistent'], (backend) => {
  const t = perTest(backend, { prefix: 'procvisor-probes-', defaults: () => ({ timeoutMs: 60_000 }) })

  it('readiness flips ready; a process\'s own stop() and the sandbox\'s stop() end it through its shutdown', async () => {
    const sb = await t.start()
    const port = await freePort()
    const said = path.join(t.dir, 'said')
    const h = await sb.processes.spawn(server(port, said), {
      readiness: { http: { port }, periodMs: 50 },
      shutdown: { signal: 'SIGTERM', timeoutMs: 10_000 },
    })
    assert.equal(await eventually(async () => (await h.nativeHandle.status()).ready, 15_000), true)
    const events = (await collect(await h.nativeHandle.logs())).filter((e) => e.type === 'probe')
    assert.deepEqual(events.map((e) => [e.probe, e.ok]), [['readiness', true]])
    assert.match(events[0].reason, new RegExp(`GET http://localhost:${port}/ answered`))
    const other = await freePort()
    const stopped = await sb.processes.spawn(server(other, `${said}-stopped`), { shutdown: {} })
    await stopped.nativeHandle.waitForPort(other, { timeout: 15_000 })
    assert.deepEqual(await stopped.nativeHandle.stop(), { code: 0, timedOut: false })
    assert.equal(fs.readFileSync(`${said}-stopped`, 'utf8'), 'SIGTERM')
    await sb._stop()
    assert.equal(fs.readFileSync(said, 'utf8'), 'SIGTERM', 'the shutdown signal reached the server, which ended by itself')
    assert.equal((await h.wait()).exitCode, 0)
  })

  it('a bad probe is refused before anything runs', async () => {
    const sb = await t.start()
    const marker = path.join(t.dir, 'ran')
    await assert.rejects(sb.processes.spawn(`touch ${marker}`, { liveness: { port: 0 } }), (e) => {
      assert.ok(e instanceof InvalidProcessOptionError, String(e))
      assert.match(e.message, /liveness\.port/)
      return true
    })
    assert.equal(fs.existsSync(marker), false)
  })
})
