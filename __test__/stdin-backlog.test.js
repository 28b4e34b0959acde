'use strict'
// Stdin has a bounded backlog: writes made without awaiting to a program that never reads are
// refused past 16 MiB with a typed error (nothing of them sent), so memory stays bounded; writes
// that await each other, and the `writer` stream, deliver every byte whatever their total.
const test = require('node:test')
const assert = require('node:assert/strict')
const os = require('node:os')
const { pipeline } = require('node:stream/promises')
const { Readable } = require('node:stream')
const { ProcessManager, ProcessStdinBacklogError } = require('..')

const pm = new ProcessManager({ workingDirectory: os.tmpdir() })
test.after(() => pm.close())
const MiB = 1024 * 1024

test('384 MiB written without awaiting to a program that reads nothing: refused past 16 MiB, memory bounded', async () => {
  const h = await pm.spawn('sleep 1000')
  const rss0 = process.memoryUsage().rss
  const chunk = Buffer.alloc(MiB, 0x61)
  const writes = []
  for (let i = 0; i < 384; i++) writes.push(h.sendStdin(chunk).then(() => 'written', (e) => e))
  const refused = (await Promise.all(writes.slice(16))).filter((r) => r instanceof ProcessStdinBacklogError)
  assert.equal(refused.length, 384 - 16, 'every write past the 16 MiB backlog is refused at once')
  assert.match(refused[0].message, /still unread/)
  assert.equal(refused[0].code, 'PROCESS_STDIN_BACKLOG_FULL')
  const grew = (process.memoryUsage().rss - rss0) / MiB
  assert.ok(grew < 64, `Node grew by ${grew.toFixed(0)} MiB`)
  await h.kill()
  const early = await Promise.all(writes.slice(0, 16))
  assert.ok(early.every((r) => r === 'written' || /PROCESS_(ALREADY_EXITED|STDIN_WRITE_FAILED)/.test(r.code)))
})

test('awaited writes and the writer stream deliver 64 MiB each, every byte', async () => {
  const h = await pm.spawn('wc -c')
  const chunk = Buffer.alloc(MiB, 0x62)
  for (let i = 0; i < 64; i++) await h.sendStdin(chunk)
  await h.closeStdin()
  assert.equal((await h.wait()).stdout.trim(), String(64 * MiB))

  const s = await pm.spawn('wc -c')
  await pipeline(Readable.from((function* () { for (let i = 0; i < 64; i++) yield chunk })()), s.writer)
  assert.equal((await s.wait()).stdout.trim(), String(64 * MiB))
})

test('a write is a copy of the bytes at the call, but for bytes handed over, which are sent as they are', async () => {
  const { StdinQueue, handOver } = require('../lib/process/stdin-queue')
  const sent = []
  const queue = new StdinQueue(
    async (buf) => sent.push(buf),
    async () => {},
    () => 'test',
  )
  const mine = Buffer.from('abc')
  const theirs = handOver(Buffer.from('def'))
  const writes = [queue.write(mine), queue.write(theirs)]
  // The caller's buffer changes after its write: what was sent is what it held at the call.
  mine.fill(0x78)
  await Promise.all(writes)
  assert.deepEqual(sent.map(String), ['abc', 'def'])
  assert.notEqual(sent[0], mine, 'a copy of a caller buffer')
  assert.equal(sent[1], theirs, 'handed-over bytes are not copied')
  assert.equal(queue.queued, 0)
})
