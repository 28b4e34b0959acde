// A persistent sandbox's processes write their logs to rotated files by default, a directory per
// start of its supervisor, and nativeHandle.logs() of any object attached to it reads back
// through them past the 1 MiB the supervisor keeps in memory.
import { it } from 'node:test'
import assert from 'node:assert/strict'
import * as fs from 'node:fs'
import * as path from 'node:path'
import { createRequire } from 'node:module'
import { NativeLocalSandbox } from 'procvisor/mastra'
import { eventually } from './helpers.mjs'
import { freshId } from './persistent-common.mjs'
import { BACKENDS, perTest } from './backends.mjs'

const { InvalidProcessOptionError } = createRequire(import.meta.url)('procvisor')

const t = perTest(BACKENDS.find((b) => b.persistent), { prefix: 'procvisor-persistent-logfiles-' })

const MiB = 1024 * 1024
/** 20 MiB of numbered 32-byte lines. */
const LINES = (20 * MiB) / 32
const want = () => Array.from({ length: LINES }, (_, i) => `${String(i + 1).padStart(31, '0')}\n`).join('')

async function stdoutOf(stream) {
  const events = []
  for await (const e of stream) events.push(e)
  const text = Buffer.concat(events.filter((e) => e.type === 'stdout').map((e) => Buffer.from(e.data))).toString()
  return { events, text }
}

it('20 MiB through the 1 MiB in memory: another object attached to the sandbox reads every line once, in order, from the files', { timeout: 120_000 }, async () => {
  const id = freshId()
  const workingDirectory = path.join(t.dir, 'wd')
  const options = { id, workingDirectory, persistent: true, timeoutMs: 120_000, logMaxBytes: 4 * MiB, logKeep: 10 }
  const sb = t.make(options)
  await sb.start()
  // The default place: beside the working directory, a directory per start of the supervisor.
  const logDirectory = sb._runtime.connection().sandbox.logDirectory
  assert.equal(path.dirname(logDirectory), path.join(t.dir, '.procvisor-logs', id))
  const h = await sb.processes.spawn(`seq -f '%031g' 1 ${LINES}`)
  assert.equal((await h.wait()).exitCode, 0)
  const processId = h.nativeHandle.id
  assert.ok(await eventually(() => fs.existsSync(path.join(logDirectory, `${processId}.log.1`))), 'the log rotated')

  const other = new NativeLocalSandbox(options)
  await other.start()
  const again = await other.processes.get(h.pid)
  const all = await stdoutOf(await again.nativeHandle.logs())
  assert.deepEqual(all.events.filter((e) => e.type === 'truncated'), [])
  const expected = want()
  assert.equal(all.text.length, expected.length)
  assert.ok(all.text === expected, 'every line once, in order')

  // From a cursor long gone from memory: the rest, without a gap or a repeat.
  const first = all.events[0]
  const rest = await stdoutOf(await again.nativeHandle.logs({ since: first.cursor }))
  assert.deepEqual(rest.events.filter((e) => e.type === 'truncated'), [])
  assert.ok(rest.text === expected.slice(first.data.byteLength), 'the lines after the cursor')
  assert.equal(rest.events.at(-1).type, 'terminal')
  await other.detach()

  // A new supervisor writes beside the old one's files, never over them.
  await sb.stop()
  await sb.start()
  const next = sb._runtime.connection().sandbox.logDirectory
  assert.notEqual(next, logDirectory)
  assert.equal(path.dirname(next), path.dirname(logDirectory))
  const h2 = await sb.processes.spawn('echo second')
  assert.equal((await h2.wait()).exitCode, 0)
  assert.ok(await eventually(() => fs.existsSync(path.join(next, `${h2.nativeHandle.id}.log`))))
  assert.ok(fs.existsSync(path.join(logDirectory, `${processId}.log.1`)), "the earlier start's files are kept")
})

it('logDirectory is where a persistent sandbox writes; a bad logMaxBytes is refused by the constructor', { timeout: 60_000 }, async () => {
  const id = freshId()
  const logs = path.join(t.dir, 'mine')
  assert.throws(
    () => new NativeLocalSandbox({ id, workingDirectory: path.join(t.dir, 'wd'), persistent: true, logMaxBytes: -1 }),
    InvalidProcessOptionError,
  )
  const sb = t.make({ id, workingDirectory: path.join(t.dir, 'wd'), persistent: true, timeoutMs: 60_000, logDirectory: logs })
  await sb.start()
  assert.equal(path.dirname(sb._runtime.connection().sandbox.logDirectory), logs)
  const h = await sb.processes.spawn('echo hello')
  assert.equal((await h.wait()).exitCode, 0)
  const file = path.join(sb._runtime.connection().sandbox.logDirectory, `${h.nativeHandle.id}.log`)
  assert.ok(await eventually(() => fs.existsSync(file) && fs.readFileSync(file).includes('hello\n')))
  assert.ok(!fs.existsSync(path.join(t.dir, '.procvisor-logs')))
})

it('logDirectory: false writes no log files, persistent or not, clones included; logs() reads what memory holds and says what it lost', { timeout: 60_000 }, async () => {
  const id = freshId()
  const workingDirectory = path.join(t.dir, 'wd')
  const sb = t.make({ id, workingDirectory, persistent: true, timeoutMs: 60_000, logDirectory: false })
  await sb.start()
  assert.equal(sb._runtime.connection().sandbox.logDirectory, null)
  // 4 MiB through the 1 MiB in memory: the start is gone, said by a `truncated` event.
  const h = await sb.processes.spawn(`seq -f '%031g' 1 ${(4 * MiB) / 32}`)
  assert.equal((await h.wait()).exitCode, 0)
  const { events, text } = await stdoutOf(await h.nativeHandle.logs())
  assert.equal(events.filter((e) => e.type === 'truncated').length, 1)
  assert.ok(text.endsWith(`${String((4 * MiB) / 32).padStart(31, '0')}\n`))
  assert.ok(text.length <= MiB, `${text.length} bytes from memory`)
  assert.equal(fs.existsSync(path.join(t.dir, '.procvisor-logs')), false, 'no default log directory')
  const clone = await sb.clone()
  assert.equal(clone._logFiles, null)
  await clone.destroy?.()

  const local = new NativeLocalSandbox({ id: freshId(), workingDirectory: path.join(t.dir, 'local'), logDirectory: false })
  assert.equal(local._logFiles, null)
})
