// NativeLocalSandbox's logDirectory: its processes' output also goes to rotated files, and a
// handle's logs() reads back through them past the 1 MiB kept in memory.
import { after, it } from 'node:test'
import assert from 'node:assert/strict'
import * as fs from 'node:fs'
import * as path from 'node:path'
import { createRequire } from 'node:module'
import { NativeLocalSandbox } from 'procvisor/mastra'
import { eventually, tempDir } from './helpers.mjs'

const { InvalidProcessOptionError } = createRequire(import.meta.url)('procvisor')
const tmp = tempDir('procvisor-mastra-logfiles-')
after(() => fs.rmSync(tmp, { recursive: true, force: true }))

it('a sandbox with logDirectory keeps its processes\' output on disk, and logs() from the start has all of it', { timeout: 60_000 }, async () => {
  const work = path.join(tmp, 'work')
  const logs = path.join(tmp, 'logs')
  const sb = new NativeLocalSandbox({ workingDirectory: work, logDirectory: logs, logMaxBytes: 1024 * 1024, logKeep: 8 })
  try {
    await sb.start()
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
    assert.ok(await eventually(() => fs.existsSync(path.join(logs, `${id}.log`)) && fs.existsSync(path.join(logs, `${id}.log.1`))))
  } finally {
    await sb._destroy()
  }
})

it('a logDirectory that is a file is refused by the constructor, persistent or not', () => {
  const file = path.join(tmp, 'plain')
  fs.writeFileSync(file, 'x')
  assert.throws(() => new NativeLocalSandbox({ workingDirectory: path.join(tmp, 'w2'), logDirectory: file }), InvalidProcessOptionError)
  assert.throws(
    () => new NativeLocalSandbox({ id: 'logs-persistent', persistent: true, workingDirectory: path.join(tmp, 'w3'), logDirectory: file }),
    (e) => e instanceof InvalidProcessOptionError && /logDirectory/.test(e.message),
  )
})
