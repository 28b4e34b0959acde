'use strict'
// The wire of persistent sandboxes, without a supervisor: frames reassembled from a byte stream
// however it is cut, at a cost that grows with the frame, not with the number of pieces.
const test = require('node:test')
const assert = require('node:assert/strict')
const protocol = require('../lib/persistent/wire/protocol')
const { FrameReader } = require('../lib/persistent/wire/reader')

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
    const reader = new FrameReader()
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
    const reader = new FrameReader()
    const out = []
    for (let i = 0; i < bytes.length; i += size) out.push(...reader.push(bytes.subarray(i, i + size)))
    assert.deepEqual(out, messages, `pieces of ${size} bytes`)
  }
})

test('a length over the limit or a body that is not JSON is a protocol error, before any allocation', () => {
  const huge = Buffer.alloc(4)
  huge.writeUInt32BE(protocol.MAX_FRAME + 1, 0)
  assert.throws(() => new FrameReader().push(huge), (e) => e.code === 'SANDBOX_PROTOCOL_MISMATCH')
  const bad = Buffer.from('\0\0\0\x03{x}', 'latin1')
  assert.throws(() => new FrameReader().push(bad), (e) => e.code === 'SANDBOX_PROTOCOL_MISMATCH' && /JSON/.test(e.message))
})

test('a frame of output fed in many small pieces is reassembled once, its bytes as they were', () => {
  const data = Buffer.alloc(4 * 1024 * 1024, 0xe9)
  const frame = Buffer.concat([protocol.outHead(4242, 1, data.length), data])
  const { result, bytes } = copiedBytes(() => {
    const reader = new FrameReader()
    const out = []
    for (let i = 0; i < frame.length; i += 1000) out.push(...reader.push(frame.subarray(i, i + 1000)))
    return out
  })
  assert.equal(result.length, 1)
  assert.deepEqual({ ...result[0], data: undefined }, { t: 'out', pid: 4242, stream: 1, data: undefined })
  assert.ok(result[0].data.equals(data))
  assert.ok(bytes <= 2 * frame.length, `copied ${bytes} bytes to reassemble a frame of ${frame.length}`)
})

test('every kind of frame, cut anywhere, arrives whole and in order: JSON, output, credit, bytes beside JSON, parts', () => {
  const { attachments, encodeValue, decodeValue } = require('../lib/persistent/wire/values')
  const att = attachments()
  const value = encodeValue({ events: [{ data: Buffer.from('héllo') }, { data: new Uint8Array([0, 255, 1]) }, { type: 'terminal' }] }, att)
  const blob = protocol.body({ t: 'log', s: 3, events: value.events }, att)
  const frames = [
    protocol.encode({ t: 'event', pid: '7', kind: 'exit', result: { exitCode: 0 } }),
    Buffer.concat([protocol.outHead(7, 0, 3), Buffer.from('abc')]),
    protocol.credit(0, 1 << 20),
    Buffer.concat([protocol.lengthOf(blob.reduce((n, b) => n + b.length, 0)), ...blob]),
    Buffer.concat(protocol.part(9, Buffer.from('{"t":'))),
  ]
  const bytes = Buffer.concat(frames)
  for (const size of [1, 2, 3, 7, 64, bytes.length]) {
    const reader = new FrameReader()
    const out = []
    for (let i = 0; i < bytes.length; i += size) out.push(...reader.push(bytes.subarray(i, i + size)))
    assert.equal(out.length, 5, `pieces of ${size} bytes`)
    assert.deepEqual(out[0], { t: 'event', pid: '7', kind: 'exit', result: { exitCode: 0 } })
    assert.equal(out[1].t, 'out')
    assert.equal(out[1].data.toString(), 'abc')
    assert.deepEqual(out[2], { t: 'credit', stream: 0, n: 1 << 20 })
    const events = decodeValue(out[3].events)
    assert.equal(events[0].data.toString(), 'héllo')
    assert.deepEqual([...events[1].data], [0, 255, 1])
    assert.deepEqual(events[2], { type: 'terminal' })
    assert.deepEqual({ ...out[4], data: out[4].data.toString() }, { t: 'part', id: 9, data: '{"t":' })
  }
})

test('a frame that is not what its kind says is a protocol error, and nothing is allocated for a length it does not hold', () => {
  const withBody = (b) => Buffer.concat([protocol.lengthOf(b.length), b])
  const blobOf = (json, payload = Buffer.alloc(0), claimed) => {
    const text = Buffer.from(json)
    const head = Buffer.alloc(5)
    head[0] = protocol.KIND.BLOB
    head.writeUInt32BE(claimed === undefined ? text.length : claimed, 1)
    return withBody(Buffer.concat([head, text, payload]))
  }
  const cases = [
    ['an empty frame', withBody(Buffer.alloc(0))],
    ['an unknown kind', withBody(Buffer.from([0x09, 1, 2]))],
    ['JSON that is not an object', withBody(Buffer.from('[1]'))],
    ['output without its pid', withBody(Buffer.from([protocol.KIND.OUT, 0, 1]))],
    ['output of a third stream', withBody(Buffer.from([protocol.KIND.OUT, 2, 0, 0, 0, 1]))],
    ['a credit of the wrong size', withBody(Buffer.from([protocol.KIND.CREDIT, 0, 0, 0, 0, 1]))],
    ['a part without its id', withBody(Buffer.from([protocol.KIND.PART, 0]))],
    ['a BLOB whose JSON is longer than the frame', blobOf('{}', Buffer.alloc(0), 0xfffffff0)],
    ['a BLOB referring past its bytes', blobOf('{"t":"call","data":{"$bin":[2,5]}}', Buffer.alloc(6))],
    ['a BLOB referring with a negative offset', blobOf('{"data":{"$bin":[-1,1]}}', Buffer.alloc(6))],
    ['a BLOB reference that is not two numbers', blobOf('{"data":{"$bin":"x"}}', Buffer.alloc(6))],
    ['a BLOB of no JSON object', blobOf('7', Buffer.alloc(1))],
  ]
  for (const [what, bytes] of cases) {
    assert.throws(() => new FrameReader().push(bytes), (e) => e.code === 'SANDBOX_PROTOCOL_MISMATCH', what)
  }
  // A `$bin` in a frame of plain JSON is not bytes: it stays the object it is.
  const [plain] = new FrameReader().push(protocol.encode({ data: { $bin: [0, 1] } }))
  assert.deepEqual(plain, { data: { $bin: [0, 1] } })
})

test("the client's reading into one reused buffer gives what the supervisor's reading gives: output in pieces, the rest whole, with the same checks", () => {
  const { attachments, encodeValue, decodeValue } = require('../lib/persistent/wire/values')
  const att = attachments()
  const value = encodeValue({ events: [{ data: Buffer.from('héllo') }] }, att)
  const blob = protocol.body({ t: 'log', s: 3, events: value.events }, att)
  const output = Buffer.alloc(70_000, 0x61)
  const bytes = Buffer.concat([
    protocol.encode({ t: 'event', pid: '7', kind: 'exit', result: { exitCode: 0 } }),
    protocol.outHead(7, 1, output.length),
    output,
    protocol.credit(0, 1 << 20),
    Buffer.concat([protocol.lengthOf(blob.reduce((n, b) => n + b.length, 0)), ...blob]),
    Buffer.concat(protocol.part(9, Buffer.from('{"t":'))),
  ])
  const whole = new FrameReader().push(bytes)
  for (const size of [1, 3, 7, 64, 4096, bytes.length]) {
    const reader = new FrameReader({ reused: true })
    const buffer = Buffer.alloc(size)
    const out = []
    let text = Buffer.alloc(0)
    for (let i = 0; i < bytes.length; i += size) {
      const n = bytes.copy(buffer, 0, i, i + size)
      for (const m of reader.push(buffer.subarray(0, n))) {
        // Output is a view valid during push only: read now; the rest must outlive the buffer.
        if (m.t === 'out') {
          assert.deepEqual([m.pid, m.stream], [7, 1])
          text = Buffer.concat([text, m.data])
          if (out.at(-1)?.t !== 'out') out.push({ t: 'out' })
        } else out.push(m)
      }
      buffer.fill(0xff)
    }
    assert.ok(text.equals(output), `pieces of ${size} bytes`)
    assert.equal(out.length, whole.length, `pieces of ${size} bytes`)
    assert.deepEqual(out[0], whole[0])
    assert.deepEqual(out[2], whole[2])
    assert.equal(decodeValue(out[3].events)[0].data.toString(), 'héllo')
    assert.equal(out[4].data.toString(), '{"t":')
  }
  // A broken head is refused by either before its body comes: a length over the limit, no
  // bytes, an unknown kind, output too short for its stream and pid.
  const heads = [[protocol.MAX_FRAME + 1, 0x7b], [0, 0x7b], [100, 0x09], [3, protocol.KIND.OUT]]
  for (const [len, kind] of heads) {
    const head = Buffer.alloc(5)
    head.writeUInt32BE(len, 0)
    head[4] = kind
    for (const reused of [false, true]) {
      assert.throws(() => new FrameReader({ reused }).push(head), (e) => e.code === 'SANDBOX_PROTOCOL_MISMATCH', `${len} ${kind} reused ${reused}`)
    }
  }
})

test('large frames read into a reused buffer come out whole and intact, below and above the size read into a buffer of their own', () => {
  const { attachments, encodeValue, decodeValue } = require('../lib/persistent/wire/values')
  for (const size of [1024 * 1024 + 17, 3 * 1024 * 1024]) {
    const data = require('node:crypto').randomBytes(size)
    const att = attachments()
    const args = encodeValue({ pid: '7', data }, att)
    const pieces = protocol.encodeCall(1, 'stdin', args, att, false)
    const bytes = Buffer.concat([...pieces, protocol.encode({ t: 'call', id: 2, op: 'list' })])
    const reader = new FrameReader({ reused: true })
    const buffer = Buffer.alloc(64 * 1024)
    const got = []
    for (let i = 0; i < bytes.length; i += buffer.length) {
      const n = bytes.copy(buffer, 0, i, i + buffer.length)
      got.push(...reader.push(buffer.subarray(0, n)))
      // What came out must not be a view of the buffer read into next.
      buffer.fill(0xee)
    }
    assert.equal(got.length, 2, `${size}`)
    assert.deepEqual([got[0].id, got[0].op, got[1].op], [1, 'stdin', 'list'])
    assert.ok(decodeValue(got[0].args).data.equals(data), `${size} bytes arrive intact`)
  }
})

test('a reply sent in parts is joined back into that reply; parts that are not one are a typed error for that call', () => {
  const { attachments } = require('../lib/persistent/wire/values')
  const reply = { t: 'reply', id: 7, value: { stdout: 'é'.repeat(3000) + '\u{1F600}'.repeat(10) } }
  const body = Buffer.concat(protocol.body(reply, attachments()))
  // Cut every 1,001 bytes: some cuts fall inside a character.
  const parts = []
  for (let i = 0; i < body.length; i += 1001) parts.push(body.subarray(i, i + 1001))
  assert.deepEqual(protocol.joinParts(parts, 7), reply)
  const broken = protocol.joinParts(parts.slice(1), 7)
  assert.equal(broken.id, 7)
  assert.equal(broken.error.code, 'SANDBOX_PROTOCOL_MISMATCH')
  assert.equal(protocol.joinParts(parts, 8).error.code, 'SANDBOX_PROTOCOL_MISMATCH')
})

test("the native take hands a supervisor both streams in order, a run per stream, up to a position", async () => {
  const { launch } = require('../lib/process/core')
  const { request } = require('../lib/faces/manager')
  const { binding } = require('../lib/native/native')
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

test('the native log read of now gives a supervisor the events of logs() at once, and re-arms its wake-up', async () => {
  const { launch } = require('../lib/process/core')
  const { request } = require('../lib/faces/manager')
  const { binding } = require('../lib/native/native')
  const req = request('printf a; sleep 0.2; printf b >&2', { maxRetainedBytes: 0 }, [{ PATH: process.env.PATH }], process.cwd(), binding.resolveContainment('auto'))
  const core = await launch('shell', req, { command: 'printf' }, [], true)
  const native = core.native
  let woken = 0
  native.setReaderWake(() => woken++)
  native.setReaderHold(null)
  while (native.lastSeq() < 1) await new Promise((r) => setTimeout(r, 5))
  const first = native.readLogNow(0, 1 << 20)
  assert.deepEqual(first.events.map((e) => [e.kind, Buffer.from(e.data).toString()]), [['stdout', 'a']])
  assert.equal(first.closed, false)
  assert.equal(native.readLogNow(first.next, 1 << 20).events.length, 0)
  const before = woken
  await core.finish()
  while (native.lastSeq() < 3) await new Promise((r) => setTimeout(r, 5))
  await new Promise((r) => setImmediate(r))
  assert.ok(woken > before, 'woken by the output after the read')
  const rest = native.readLogNow(first.next, 1 << 20)
  assert.deepEqual(rest.events.map((e) => e.kind), ['stderr', 'exited'])
  assert.equal(rest.events[1].cursor, native.cursorAt(3))
  assert.equal(rest.closed, true)
  native.setReaderWake(null)
})

test("a Unix socket's send buffer can be widened, up to what the kernel allows, and a bad descriptor is an error", async () => {
  const net = require('node:net')
  const fs = require('node:fs')
  const os = require('node:os')
  const path = require('node:path')
  const { binding } = require('../lib/native/native')
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'procvisor-sockbuf-'))
  const server = net.createServer(() => {})
  await new Promise((r) => server.listen(path.join(dir, 's.sock'), r))
  const socket = net.connect(path.join(dir, 's.sock'))
  await new Promise((r) => socket.once('connect', r))
  try {
    const small = binding.setSocketSendBuffer(socket._handle.fd, 8 * 1024)
    const large = binding.setSocketSendBuffer(socket._handle.fd, 4 * 1024 * 1024)
    assert.ok(small > 0 && large >= small, `${small} then ${large}`)
    const max = Number(fs.readFileSync('/proc/sys/net/core/wmem_max', 'utf8'))
    if (max >= 4 * 1024 * 1024) assert.ok(large >= 4 * 1024 * 1024, `${large} granted of ${max}`)
    assert.throws(() => binding.setSocketSendBuffer(-1, 1024), /send buffer of socket -1/)
  } finally {
    socket.destroy()
    await new Promise((r) => server.close(r))
    fs.rmSync(dir, { recursive: true, force: true })
  }
})

test("a client's decoder of a process's output: a character split between two reads comes whole, each stream its own, pieces of at most 64 KiB, U+FFFD at an incomplete end", () => {
  const { binding } = require('../lib/native/native')
  const d = new binding.NativeOutputDecoder()
  const euro = Buffer.from('€')
  assert.deepEqual(d.write(0, euro.subarray(0, 2)), [])
  // The other stream's bytes between the two halves decode on their own.
  assert.deepEqual(d.write(1, Buffer.from('é')), [{ stream: 1, text: 'é' }])
  assert.deepEqual(d.write(0, Buffer.concat([euro.subarray(2), Buffer.from('ok')])), [{ stream: 0, text: '€ok' }])
  const big = d.write(0, Buffer.alloc(200 * 1024, 'a'))
  assert.ok(big.length >= 4 && big.every((c) => c.stream === 0 && c.text.length <= 64 * 1024))
  assert.equal(big.map((c) => c.text).join(''), 'a'.repeat(200 * 1024))
  assert.deepEqual(d.write(1, Buffer.from([0xff, 0x41])), [{ stream: 1, text: '\ufffdA' }])
  d.write(1, euro.subarray(0, 1))
  assert.deepEqual(d.end(), [{ stream: 1, text: '\ufffd' }])
  assert.throws(() => d.write(2, Buffer.from('x')), /stream is 0 \(stdout\) or 1 \(stderr\)/)
})
