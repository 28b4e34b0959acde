// Probes and shutdown on the Mastra face: `sandbox.processes.spawn(cmd, { readiness, liveness,
// shutdown })` in a local sandbox and in a persistent one, whose supervisor runs the probes and
// ends the process through its shutdown when the sandbox stops.
import { afterEach, beforeEach, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import * as fs from 'node:fs'
import * as path from 'node:path'
import { NativeLocalSandbox } from 'procvisor/mastra'
import { InvalidProcessOptionError } from 'procvisor'
import { eventually, freePort, tempDir } from './helpers.mjs'
import { freshId, sweep } from './persistent-common.mjs'

let tmp
let made = []

function make(options) {
  const sb = new NativeLocalSandbox({ workingDirectory: path.join(tmp, 'wd'), ...options })
  made.push(sb)
  return sb
}

async function collect(stream) {
  const events = []
  for await (const e of stream) events.push(e)
  return events
}

beforeEach(() => {
  tmp = tempDir('procvisor-probes-')
})

afterEach(async () => {
  for (const sb of made.splice(0)) {
    await sb._destroy().catch(() => {})
    if (sb._persistent) await sweep(sb.id)
  }
  fs.rmSync(tmp, { recursive: true, force: true })
})

/** A server that writes `said` when SIGTERM asks it to end, then exits 0. */
function server(port, said) {
  const code = `const s = require('node:http').createServer((q, r) => r.end('ok')).listen(${port}, '127.0.0.1'); process.on('SIGTERM', () => { require('node:fs').writeFileSync(${JSON.stringify(said)}, 'SIGTERM'); s.close(() => process.exit(0)) })`
  return `exec ${JSON.stringify(process.execPath)} -e ${JSON.stringify(code)}`
}

describe('probes and shutdown on the Mastra face', () => {
  for (const persistent of [false, true]) {
    it(`${persistent ? 'a persistent' : 'a local'} sandbox: readiness flips ready, and stop() ends the process through its shutdown`, async () => {
      const sb = make({ id: freshId(), persistent, timeoutMs: 60_000 })
      await sb.start()
      const port = await freePort()
      const said = path.join(tmp, `said-${persistent}`)
      const h = await sb.processes.spawn(server(port, said), {
        readiness: { http: { port }, periodMs: 50 },
        shutdown: { signal: 'SIGTERM', timeoutMs: 10_000 },
      })
      assert.equal(await eventually(async () => (await h.nativeHandle.status()).ready, 15_000), true)
      const events = (await collect(await h.nativeHandle.logs())).filter((e) => e.type === 'probe')
      assert.deepEqual(events.map((e) => [e.probe, e.ok]), [['readiness', true]])
      assert.match(events[0].reason, new RegExp(`GET http://localhost:${port}/ answered`))
      if (persistent) {
        // Through the supervisor, as from any attached Node process.
        const other = await freePort()
        const stopped = await sb.processes.spawn(server(other, `${said}-stopped`), { shutdown: {} })
        await stopped.nativeHandle.waitForPort(other, { timeout: 15_000 })
        assert.deepEqual(await stopped.nativeHandle.stop(), { code: 0, timedOut: false })
        assert.equal(fs.readFileSync(`${said}-stopped`, 'utf8'), 'SIGTERM')
      }
      await sb._stop()
      assert.equal(fs.readFileSync(said, 'utf8'), 'SIGTERM', 'the shutdown signal reached the server, which ended by itself')
      assert.equal((await h.wait()).exitCode, 0)
    })

    it(`${persistent ? 'a persistent' : 'a local'} sandbox: a bad probe is refused before anything runs`, async () => {
      const sb = make({ id: freshId(), persistent, timeoutMs: 60_000 })
      await sb.start()
      const marker = path.join(tmp, 'ran')
      await assert.rejects(sb.processes.spawn(`touch ${marker}`, { liveness: { port: 0 } }), (e) => {
        assert.ok(e instanceof InvalidProcessOptionError, String(e))
        assert.match(e.message, /liveness\.port/)
        return true
      })
      assert.equal(fs.existsSync(marker), false)
      await sb._stop()
    })
  }
})
