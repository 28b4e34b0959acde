// NativeLocalSandbox's logDirectory, on both procvisor backends: its processes' output also goes
// to rotated files, and a handle's logs() reads back through them past the 1 MiB kept in memory.
import { it } from 'node:test'
import assert from 'node:assert/strict'
import * as fs from 'node:fs'
import * as path from 'node:path'
import { createRequire } from 'node:module'
import { NativeLocalSandbox } from 'procvisor/mastra'
import { describeBackends, perTest } from './backends.mjs'
import { eventually } from './helpers.mjs'

const { InvalidProcessOptionError } = createRequire(import.meta.url)('procvisor')

describeBackends('log files', ['native', 'persistent'], { timeout: 60_000 }, (backend) => {
  const t = perTest(backend, { prefix: 'procvisor-mastra-logfiles-' })

  it("a sandbox with logDirectory keeps its processes' output on disk, and logs() from the start has all of it", async () => {
    const logs = path.join(t.dir, 'logs')
    const sb = await t.start({ logDirectory: logs, logMaxBytes: 1024 * 1024, logKeep: 8 })
    const h = await sb.processes.spawn('seq 1 400000')
    assert.equal((await h.wait()).exitCode, 0)
    const want = Array.from({ length: 400000 }, (_, i) => `${i + 1}\n`).join('')
    assert.ok(want.length > 2 * 1024 * 1024)
    const events = []
    for await (const e of await h.nativeHandle.logs()) events.push(e)
    assert.equal(events[0].type, 'stdout')
    assert.deepEqual(events.filter((e) => e.type === 'truncated'), [])
    const text = Buffer.concat(events.filter((e) => e.type === 'stdout').map((e) => Buffer.from(e.data))).toString()
    assert.equal(text, want)
    const id = h.nativeHandle.id
    // A supervisor writes a directory of its own per start, inside the one given.
    const files = backend.persistent ? sb._runtime.connection().sandbox.logDirectory : logs
    assert.equal(path.dirname(files), backend.persistent ? logs : path.dirname(logs))
    assert.ok(await eventually(() => fs.existsSync(path.join(files, `${id}.log`)) && fs.existsSync(path.join(files, `${id}.log.1`))))
  })

  it('a logDirectory that is a file is refused by the constructor', () => {
    const file = path.join(t.dir, 'plain')
    fs.writeFileSync(file, 'x')
    assert.throws(() => t.make({ logDirectory: file }), (e) => e instanceof InvalidProcessOptionError && /logDirectory/.test(e.message))
  })
})
