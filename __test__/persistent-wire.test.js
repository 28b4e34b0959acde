'use strict'
// The wire of persistent sandboxes, without a supervisor: frames reassembled from a byte stream
// however it is cut, at a cost that grows with the frame, not with the number of pieces.
const test = require('node:test')
const assert = require('node:assert/strict')
const protocol = require('../lib/persistent/protocol')

/** Counts the bytes Buffer.concat copies while `fn` runs. */
function copiedBytes(fn) {
  const concat = Buffer.concat
  let bytes = 0
  Buffer.concat = function (list, total) {
    const out = concat.call(this, list, total)
    bytes += out.length
    return out
  }
  try {
    return { result: fn(), bytes }
  } finally {
    Buffer.concat = concat
  }
}

test('a frame fed in many small pieces is reassembled once, not copied again at every piece', () => {
  const text = 'x'.repeat(4 * 1024 * 1024)
  const frame = protocol.encode({ t: 'event', data: text })
  const { result, bytes } = copiedBytes(() => {
    const reader = new protocol.FrameReader()
    const out = []
    for (let i = 0; i < frame.length; i += 1024) out.push(...reader.push(frame.subarray(i, i + 1024)))
    return out
  })
  assert.equal(result.length, 1)
  assert.equal(result[0].data, text)
  assert.ok(bytes <= 2 * frame.length, `copied ${bytes} bytes to reassemble a frame of ${frame.length}`)
})

test('frames cut anywhere, several to a piece or one split across pieces, arrive whole and in order', () => {
  const messages = Array.from({ length: 50 }, (_, i) => ({ t: 'event', i, data: 'é'.repeat(i * 37) }))
  const bytes = Buffer.concat(messages.map(protocol.encode))
  for (const size of [1, 2, 3, 5, 7, 64, 1000, bytes.length]) {
    const reader = new protocol.FrameReader()
    const out = []
    for (let i = 0; i < bytes.length; i += size) out.push(...reader.push(bytes.subarray(i, i + size)))
    assert.deepEqual(out, messages, `pieces of ${size} bytes`)
  }
})

test('a length over the limit or a body that is not JSON is a protocol error, before any allocation', () => {
  const huge = Buffer.alloc(4)
  huge.writeUInt32BE(protocol.MAX_FRAME + 1, 0)
  assert.throws(() => new protocol.FrameReader().push(huge), (e) => e.code === 'SANDBOX_PROTOCOL_MISMATCH')
  const bad = Buffer.from('\0\0\0\x03{x}', 'latin1')
  assert.throws(() => new protocol.FrameReader().push(bad), (e) => e.code === 'SANDBOX_PROTOCOL_MISMATCH' && /JSON/.test(e.message))
})

test("a stream's tail hands a client that fell behind whole chunks from its offset, or from the oldest it keeps", () => {
  const { Tail } = require('../lib/persistent/tail')
  const tail = new Tail(10)
  for (const text of ['aaaa', 'bbbb', 'cccc', 'dddd']) tail.append(text)
  assert.equal(tail.end, 16)
  assert.equal(tail.toString(), 'bbccccdddd')
  // Offset 0 was dropped: the oldest chunk kept comes first.
  assert.deepEqual(tail.since(0, 1), { text: 'bbbb', next: 8 })
  assert.deepEqual(tail.since(8, 8), { text: 'ccccdddd', next: 16 })
  assert.deepEqual(tail.since(8, 5), { text: 'cccc', next: 12 })
  assert.equal(tail.since(16, 100), null)
  tail.append('é')
  assert.deepEqual(tail.since(16, 100), { text: 'é', next: 18 })
})

test('a reply sent in parts is joined back into that reply; parts that are not one are a typed error for that call', () => {
  const reply = { t: 'reply', id: 7, value: { stdout: 'é'.repeat(3000) + '\u{1F600}'.repeat(10) } }
  const text = JSON.stringify(reply)
  // Cut every 1,001 characters: some cuts fall inside a surrogate pair.
  const parts = []
  for (let i = 0; i < text.length; i += 1001) parts.push(JSON.parse(JSON.stringify(text.slice(i, i + 1001))))
  assert.deepEqual(protocol.joinParts(parts, 7), reply)
  const broken = protocol.joinParts(parts.slice(1), 7)
  assert.equal(broken.id, 7)
  assert.equal(broken.error.code, 'SANDBOX_PROTOCOL_MISMATCH')
  assert.equal(protocol.joinParts(parts, 8).error.code, 'SANDBOX_PROTOCOL_MISMATCH')
})

test("the native take hands a supervisor both streams in order, a run per stream, up to a position", async () => {
  const { launch } = require('../lib/core')
  const { request } = require('../lib/manager')
  const { binding } = require('../lib/native')
  const req = request('printf a; sleep 0.05; printf b >&2; sleep 0.05; printf c; sleep 0.05; printf d >&2', { maxRetainedBytes: 0 }, [{ PATH: process.env.PATH }], process.cwd(), binding.resolveContainment('auto'))
  const core = await launch('shell', req, { command: 'printf' })
  await core.finish()
  const native = core.native
  const runs = (take) => take.runs.map((r) => [r.stream, r.data.toString()])
  const all = native.takeOutput(0, 1 << 20)
  assert.deepEqual(runs(all), [[0, 'a'], [1, 'b'], [0, 'c'], [1, 'd']])
  assert.equal(all.truncated, false)
  assert.equal(all.finished, true)
  // Up to the second event, and on from there.
  const first = native.takeOutput(0, 1 << 20, 2)
  assert.equal(first.next, 2)
  assert.equal(first.runs.map((r) => r.data.toString()).join(''), 'ab')
  const rest = native.takeOutput(first.next, 1 << 20)
  assert.equal(rest.runs.map((r) => r.data.toString()).join(''), 'cd')
  assert.equal(native.takeOutput(rest.next, 1 << 20).runs.length, 0)
  assert.throws(() => native.takeOutput(rest.next + 5, 1), (e) => e.code === 'INVALID_PROCESS_OPTION')
})
