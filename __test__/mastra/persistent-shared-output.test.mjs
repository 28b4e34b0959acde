// The output of a persistent sandbox's processes in shared memory: a client that maps a
// process's ring reads the same bytes it would have been sent, in the same order, and the rules
// of a hostile peer hold both ways: the supervisor refuses a client that answers what it was not
// asked or claims output it was never told of, and a client that stops reading the ring does not
// hold the process back.
import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import * as fs from 'node:fs'
import * as path from 'node:path'
import { createHash } from 'node:crypto'
import { createRequire } from 'node:module'
import { nextOf, raw, sandboxesPerTest, watchingRings } from './persistent-common.mjs'
import { eventually } from './helpers.mjs'

const require = createRequire(import.meta.url)
const { binding } = require('../../lib/native/native.js')
const protocol = require('../../lib/persistent/wire/protocol.js')

const sandboxes = sandboxesPerTest('shared')

/**
 * Counts what this Node process reads from rings while `fn` runs: the rings it mapped, and the
 * bytes read from them.
 */
async function countingRings(fn) {
  const seen = { rings: 0, bytes: 0 }
  const result = await watchingRings(fn, (ring) => {
    seen.rings++
    const read = ring.readText.bind(ring)
    ring.readText = (...a) => {
      const r = read(...a)
      seen.bytes += r.bytes
      return r
    }
  })
  return { result, seen }
}

/** 24 MiB on stdout and 6 on stderr, bytes of every value, from a file made once. */
function floodFile(dir) {
  const file = path.join(dir, 'flood.bin')
  const block = Buffer.alloc(1 << 20)
  for (let i = 0; i < block.length; i++) block[i] = (i * 131 + (i >> 9)) & 0xff
  const fd = fs.openSync(file, 'w')
  for (let i = 0; i < 24; i++) {
    block[0] = i
    fs.writeSync(fd, block)
  }
  fs.closeSync(fd)
  return file
}

/** Runs `cat` of the flood to stdout and part of it to stderr; digests of what reached the listeners. */
async function flood(sb, file) {
  const digests = [createHash('sha256'), createHash('sha256')]
  const sizes = [0, 0]
  const h = await sb.processes.spawn(`cat ${file}; head -c 6291456 ${file} >&2; printf end`, {
    maxRetainedBytes: 0,
    onStdout: (d) => {
      digests[0].update(d)
      sizes[0] += Buffer.byteLength(d)
    },
    onStderr: (d) => {
      digests[1].update(d)
      sizes[1] += Buffer.byteLength(d)
    },
  })
  const result = await h.wait()
  assert.equal(result.exitCode, 0)
  return { sizes, digests: digests.map((d) => d.digest('hex')) }
}

describe('the output of a persistent sandbox in shared memory', () => {
  it('a flood reaches the listeners as it does from a local process, read from the ring; and as bytes where shared memory is turned off', async () => {
    const file = floodFile(sandboxes.dir)
    const { NativeLocalSandbox } = await import('procvisor/mastra')
    const local = new NativeLocalSandbox({ id: 'shared-local', workingDirectory: path.join(sandboxes.dir, 'local') })
    await local.start()
    const expected = await flood(local, file)
    await local.destroy()

    const { sb } = await sandboxes.start()
    const shared = await countingRings(() => flood(sb, file))
    assert.deepEqual(shared.result, expected)
    assert.equal(shared.seen.rings, 1, 'the process was offered its ring once')
    // As bytes: the 256 KiB before the offer, what the client's credit let the supervisor send
    // before the client read the offer (a window), and the rest of the log's 1 MiB before the ring.
    const total = 30 * 1024 * 1024 + 3
    const asBytes = 256 * 1024 + protocol.WINDOW + 1024 * 1024
    assert.ok(shared.seen.bytes >= total - asBytes, `${shared.seen.bytes} of ${total} bytes read from the ring`)

    process.env.PROCVISOR_SHARED_OUTPUT = '0'
    let off
    try {
      const { sb: bytes } = await sandboxes.start()
      off = await countingRings(() => flood(bytes, file))
    } finally {
      delete process.env.PROCVISOR_SHARED_OUTPUT
    }
    assert.deepEqual(off.result, expected)
    assert.deepEqual(off.seen, { rings: 0, bytes: 0 })
  })

  it('a process that writes little is never offered a ring, and two clients of one flood each read it whole', async () => {
    const { sb, socketPath } = await sandboxes.start()
    const small = await countingRings(async () => (await (await sb.processes.spawn('seq 1 1000')).wait()).stdout)
    assert.equal(small.result.split('\n').length, 1001)
    assert.equal(small.seen.rings, 0)

    // A second client, of the wire, reads the same flood from the ring it is offered.
    const c = await raw(socketPath).hello({ shared: true })
    const lines = 2_000_000
    const both = await countingRings(async () => {
      let text = ''
      // It waits for a byte of stdin, sent once the client is attached: both read from the start.
      const h = await sb.processes.spawn(`head -c 1 >/dev/null; seq 1 ${lines}`, { maxRetainedBytes: 0, onStdout: (d) => (text += d) })
      c.send({ t: 'call', id: 1, op: 'attach', args: { pid: h.pid } })
      await nextOf(c, (m) => m.t === 'reply')
      await h.sendStdin('go')
      const got = await readAsClient(c, h.pid)
      await h.wait()
      return { text, got }
    })
    const want = Array.from({ length: lines }, (_, i) => `${i + 1}\n`).join('')
    assert.equal(both.result.text.length, want.length)
    assert.ok(both.result.text === want, 'the handle read the flood whole')
    assert.ok(both.result.got.text === want, 'the client of the wire read the flood whole')
    assert.ok(both.result.got.rings > 0 && both.result.got.fromRing > want.length / 2, `${both.result.got.fromRing} bytes from its ring`)
    c.socket.destroy()
  })

  it('a client that answers what it was not asked, or claims output it was never told of, is refused; the others are served', async () => {
    const { sb, socketPath } = await sandboxes.start()
    // An answer to an offer never made.
    const h = await sb.processes.spawn('sleep 30')
    const a = await raw(socketPath).hello({ shared: true })
    a.send({ t: 'call', id: 1, op: 'attach', args: { pid: h.pid } })
    await nextOf(a, (m) => m.t === 'reply')
    a.send({ t: 'shared', pid: Number(h.pid) })
    a.send({ t: 'read', pid: Number(h.pid), seq: 1 })
    // Until the supervisor offers a ring, neither frame names anything it sent: ignored.
    a.send({ t: 'call', id: 2, op: 'list' })
    assert.equal((await nextOf(a, (m) => m.t === 'reply')).id, 2)

    // A flood offered, taken, then a read past the wake-up: the connection is refused.
    const b = await raw(socketPath).hello({ shared: true })
    const flood = await sb.processes.spawn('head -c 1 >/dev/null; seq 1 3000000', { maxRetainedBytes: 0 })
    b.send({ t: 'call', id: 1, op: 'attach', args: { pid: flood.pid } })
    await nextOf(b, (m) => m.t === 'reply')
    await flood.sendStdin('go')
    const share = await nextOf(b, (m) => m.kind === 'share')
    const ring = binding.openSharedOutput(sb._runtime.connection().sandbox.sharedOutput, share.token)
    // A token is taken once: a second take of the same is refused by the descriptors' server.
    assert.throws(() => binding.openSharedOutput(sb._runtime.connection().sandbox.sharedOutput, share.token), /cannot take the shared output/)
    assert.throws(() => binding.openSharedOutput(sb._runtime.connection().sandbox.sharedOutput, 'f'.repeat(32)), /cannot take the shared output/)
    assert.throws(() => binding.openSharedOutput('/nowhere', 'not hex'), /32 hex digits/)
    b.send({ t: 'shared', pid: Number(flood.pid) })
    const wake = await nextOf(b, (m) => m.kind === 'wake')
    b.send({ t: 'read', pid: Number(flood.pid), seq: wake.upTo + 1_000_000 })
    const refused = await nextOf(b, (m) => m.t === 'refused' || m === 'closed')
    assert.equal(refused.t, 'refused')
    assert.match(refused.message, /past the \d+ it was told of/)
    ring.close()
    assert.throws(() => ring.readText(0, 1, 1, new binding.NativeOutputDecoder()), /closed/)

    // Neither took anything from the sandbox or its other clients.
    const echo = await sb.processes.spawn('echo served')
    assert.equal((await echo.wait()).stdout, 'served\n')
    assert.equal((await flood.wait()).exitCode, 0)
    a.socket.destroy()
  })

  it('once the last client that was offered a ring is gone, the supervisor stops writing it and lets it go', async () => {
    const { sb, socketPath } = await sandboxes.start()
    assert.equal(ringsOf(sb.supervisorPid), 0)
    // Spawned by the raw client, which alone follows it: 1 MiB, then quiet for a while.
    const c = await raw(socketPath).hello({ shared: true })
    c.send({ t: 'call', id: 1, op: 'spawn', args: { command: 'head -c 1048576 /dev/zero; sleep 30', env: { PATH: process.env.PATH } } })
    const pid = (await nextOf(c, (m) => m.t === 'reply')).value.pid
    const share = await nextOf(c, (m) => m.kind === 'share')
    const ring = binding.openSharedOutput(c.greeting.sandbox.sharedOutput, share.token)
    c.send({ t: 'shared', pid: Number(pid) })
    await nextOf(c, (m) => m.kind === 'ring')
    assert.equal(ringsOf(sb.supervisorPid), 1)
    // Its text is decoded only by a process's decoder: anything else is refused, nothing read.
    for (const bad of [{}, null, new binding.LogPattern('x', ''), ring]) assert.throws(() => ring.readText(0, 1e9, 1 << 20, bad), /NativeOutputDecoder/)
    c.socket.destroy()
    ring.close()
    assert.ok(await eventually(() => ringsOf(sb.supervisorPid) === 0), 'the ring is let go while the process runs on')
    assert.equal((await sb.processes.list()).find((p) => p.pid === pid).running, true)
  })

  it('a client reading the ring holds the process back by the ring: further behind than the log would let it be, and it loses nothing', async () => {
    const { sb, socketPath } = await sandboxes.start()
    const c = await raw(socketPath).hello({ shared: true })
    const size = 32 * 1024 * 1024
    const h = await sb.processes.spawn(`head -c 1 >/dev/null; head -c ${size} /dev/zero`, { maxRetainedBytes: 0 })
    c.send({ t: 'call', id: 1, op: 'attach', args: { pid: h.pid } })
    await nextOf(c, (m) => m.t === 'reply')
    await h.sendStdin('go')
    let ahead
    const got = await readAsClient(c, h.pid, {
      async firstWake(ring, pos) {
        // Slow to answer (less than the stall rule's second): the process waits for it.
        await new Promise((resolve) => setTimeout(resolve, 400))
        assert.equal((await sb.processes.list()).find((p) => p.pid === h.pid).running, true)
        const r = ring.readText(pos, Number.MAX_SAFE_INTEGER, 64 * 1024 * 1024, new binding.NativeOutputDecoder())
        assert.equal(r.truncated, false)
        ahead = r.bytes
      },
    })
    // The log (1 MiB) would have held it at half its size; the ring (4 MiB) lets it run to half its own.
    assert.ok(ahead > 1024 * 1024 && ahead < 8 * 1024 * 1024, `${ahead} bytes written ahead of the client`)
    assert.equal(got.text.length, size)
    assert.ok(/^\0*$/.test(got.text))
    assert.equal((await h.wait()).exitCode, 0)
    c.socket.destroy()
  })

  it('a client that maps the ring and stops reading does not hold the process back', async () => {
    const { sb, socketPath } = await sandboxes.start()
    const c = await raw(socketPath).hello({ shared: true })
    let bytes = 0
    const h = await sb.processes.spawn('head -c 1 >/dev/null; head -c 67108864 /dev/zero', { maxRetainedBytes: 0, onStdout: (d) => (bytes += d.length) })
    c.send({ t: 'call', id: 1, op: 'attach', args: { pid: h.pid } })
    await nextOf(c, (m) => m.t === 'reply')
    await h.sendStdin('go')
    const share = await nextOf(c, (m) => m.kind === 'share')
    const ring = binding.openSharedOutput(sb._runtime.connection().sandbox.sharedOutput, share.token)
    c.send({ t: 'shared', pid: Number(h.pid) })
    await nextOf(c, (m) => m.kind === 'wake')
    // It never answers: after a second without an answer, the process writes on for the others.
    const result = await h.wait()
    assert.equal(result.exitCode, 0)
    assert.equal(bytes, 64 * 1024 * 1024)
    // Reading at last, it finds the ring overtaken: it reads from the oldest output kept, whole
    // records, and learns it lost some.
    const read = ring.readText(0, Number.MAX_SAFE_INTEGER, 1 << 20, new binding.NativeOutputDecoder())
    assert.equal(read.truncated, true)
    assert.ok(read.bytes > 0 && read.chunks.every((c) => /^\0+$/.test(c.text)))
    ring.close()
    c.socket.destroy()
  })
})

/**
 * How many rings the supervisor `pid` holds open: its memfds (by their name), counted once each
 * (a ring being handed to a client is open twice for a moment, its copy closed once sent).
 */
function ringsOf(pid) {
  const rings = new Set()
  for (const fd of fs.readdirSync(`/proc/${pid}/fd`)) {
    try {
      if (fs.readlinkSync(`/proc/${pid}/fd/${fd}`).startsWith('/memfd:procvisor-output')) rings.add(fs.statSync(`/proc/${pid}/fd/${fd}`).ino)
    } catch {}
  }
  return rings.size
}

/**
 * Reads the output of process `pid` as procvisor's client does: bytes from OUT frames until a
 * ring is offered, then from the ring at each wake-up, answering each; until the exit.
 */
async function readAsClient(c, pid, { firstWake } = {}) {
  // One decoder for the bytes and the ring, as the client's inbox has.
  const decoder = new binding.NativeOutputDecoder()
  const parts = []
  let ring
  let pos
  let fromRing = 0
  let rings = 0
  for (;;) {
    const m = await c.next()
    assert.notEqual(m, 'closed')
    if (m.t === 'out' && String(m.pid) === String(pid)) for (const t of decoder.write(m.stream, m.data)) parts.push(t.text)
    if (m.t !== 'event' || String(m.pid) !== String(pid)) continue
    if (m.kind === 'share') {
      ring = binding.openSharedOutput(c.greeting.sandbox.sharedOutput, m.token)
      rings++
      c.send({ t: 'shared', pid: Number(pid) })
    } else if (m.kind === 'ring') {
      pos = ring.positionAfter(m.after)
    } else if (m.kind === 'wake') {
      if (firstWake) await firstWake(ring, pos)
      firstWake = undefined
      for (;;) {
        const r = ring.readText(pos, m.upTo, 1 << 20, decoder)
        assert.equal(r.truncated, false)
        pos = r.pos
        if (r.bytes === 0) break
        for (const t of r.chunks) parts.push(t.text)
        fromRing += r.bytes
      }
      c.send({ t: 'read', pid: Number(pid), seq: m.upTo })
    } else if (m.kind === 'exit') {
      ring?.close()
      for (const t of decoder.end()) parts.push(t.text)
      return { text: parts.join(''), fromRing, rings }
    }
  }
}
