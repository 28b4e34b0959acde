// A followed `logs()` stream of a persistent sandbox's process, read from the process's ring in
// shared memory once it has carried much: the same events as the log gives, in their order and
// with their cursors, the events that are not output among them; a reader that falls behind the
// ring goes on as bytes from where it lost track; and a client that lies about the ring is refused.
import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import { createRequire } from 'node:module'
import { nextOf, raw, sandboxesPerTest, watchingRings } from './persistent-common.mjs'

const require = createRequire(import.meta.url)
const { binding } = require('../../lib/native/native.js')
const protocol = require('../../lib/persistent/wire/protocol.js')

const sandboxes = sandboxesPerTest('shared-logs')

/** Counts the events this Node process reads from rings while `fn` runs, by type, and the reads that found the writer past them. */
async function countingEvents(fn, seen = { rings: 0, types: {}, overtaken: 0 }) {
  const result = await watchingRings(fn, (ring) => {
    seen.rings++
    const read = ring.readEvents.bind(ring)
    ring.readEvents = (...a) => {
      const r = read(...a)
      if (r.truncated) seen.overtaken++
      for (const e of r.events) seen.types[e.kind] = (seen.types[e.kind] ?? 0) + 1
      return r
    }
  })
  return { result, seen }
}

/** The sequence number a cursor names (`pvc1.<id>.<seq in hex>.<check>`). */
const seqOf = (cursor) => parseInt(cursor.split('.')[2], 16)

/** Reads a followed stream to its end, `pause(bytes)` awaited after each event; what it got. */
async function follow(stream, pause) {
  const got = { types: [], digests: { stdout: createHash('sha256'), stderr: createHash('sha256') }, bytes: 0, seqs: [], cursors: [], events: [] }
  for await (const e of stream) {
    got.types.push(e.type)
    got.seqs.push(seqOf(e.cursor))
    got.cursors.push(e.cursor)
    if (e.type !== 'stdout' && e.type !== 'stderr') got.events.push(e)
    else {
      got.digests[e.type].update(e.data)
      got.bytes += e.data.length
    }
    if (pause) await pause(got.bytes)
  }
  got.digests = { stdout: got.digests.stdout.digest('hex'), stderr: got.digests.stderr.digest('hex') }
  return got
}

/** Sequence numbers that follow each other without a gap (a `truncated` marker names the last one before it). */
function assertNoGaps(seqs) {
  for (let i = 1; i < seqs.length; i++) assert.equal(seqs[i], seqs[i - 1] + 1, `event ${i} follows ${seqs[i - 1]} with ${seqs[i]}`)
}

/**
 * Paces a process that writes a chunk of `chunk` bytes for each byte of stdin: it is given one
 * at once, then one each time the reader has all the chunks so far (`pause(bytes)`), so that it never runs far
 * ahead of the reader, however busy the machine; and one more whenever nothing came for 200 ms
 * (a byte sent to a run that ended before it read it).
 */
function pacer(h, chunk) {
  let sent = 0
  let seen = -1
  let last = Date.now()
  const give = () => {
    sent++
    h.sendStdin('g').catch(() => {})
  }
  give()
  const timer = setInterval(() => {
    if (Date.now() - last < 200) return
    last = Date.now()
    give()
  }, 50)
  return {
    pause: async (bytes) => {
      if (bytes !== seen) [seen, last] = [bytes, Date.now()]
      while (bytes >= sent * chunk) give()
    },
    stop: () => clearInterval(timer),
  }
}

/** A shell loop that writes `n` chunks of `chunk` zero bytes, each once it has read a byte of stdin. */
const chunks = (n, chunk) => `for i in $(seq ${n}); do dd bs=1 count=1 status=none >/dev/null; head -c ${chunk} /dev/zero; done`

const digest = (text) => createHash('sha256').update(text).digest('hex')
const MiB = 1024 * 1024

describe('a followed logs() stream of a persistent sandbox, read from shared memory', () => {
  it('gets every event of a flood from the ring, in order, with cursors that the process takes back', async () => {
    const { sb } = await sandboxes.start()
    const { result: got, seen } = await countingEvents(async () => {
      // Each MiB waits for a byte of stdin, the first sent once the stream is open: it follows
      // from the first byte, and keeps up.
      const h = await sb.processes.spawn(`${chunks(24, MiB)}; printf oops >&2; printf end`, { maxRetainedBytes: 0 })
      const stream = await h.nativeHandle.logs({ follow: true })
      const pace = pacer(h, MiB)
      try {
        const got = await follow(stream, pace.pause)
        got.handle = h
        return got
      } finally {
        pace.stop()
      }
    })
    assert.equal(seen.rings, 2, "the ring mapped for the handle's output and for the stream")
    assert.ok(seen.types.stdout > 10, `${seen.types.stdout} stdout events from the ring`)
    assert.equal(seen.types.exited, 1, 'the end, read from the ring')
    assert.equal(seen.overtaken, 0)
    assert.equal(got.bytes, 24 * MiB + 7)
    assert.equal(got.digests.stdout, digest(Buffer.concat([Buffer.alloc(24 * MiB), Buffer.from('end')])))
    assert.equal(got.digests.stderr, digest('oops'))
    assert.equal(got.types.at(-1), 'terminal')
    assert.equal(got.events.at(-1).exit.code, 0)
    assert.ok(!got.types.includes('truncated'))
    assertNoGaps(got.seqs)
    // A cursor read from the ring is the process's own: a read since it starts right after it.
    // One the memory log still holds: how much of a flood the files keep depends on the writer.
    const i = got.cursors.length - 4
    const rest = await follow(await got.handle.nativeHandle.logs({ since: got.cursors[i] }))
    assert.deepEqual(rest.seqs, got.seqs.slice(i + 1))
    assert.deepEqual(rest.types, got.types.slice(i + 1))
  })

  it("a service's restarts come through the ring in their place", async () => {
    const { sb } = await sandboxes.start()
    const { result: got, seen } = await countingEvents(async () => {
      // Each run writes 2 MiB, paced by the reader, then fails; the second run is the last.
      const h = await sb.processes.spawn(`${chunks(4, MiB / 2)}; exit 3`, {
        maxRetainedBytes: 0,
        restart: { policy: 'on-failure', maxRestarts: 1, backoffMs: { initial: 20 } },
      })
      const stream = await h.nativeHandle.logs({ follow: true })
      const pace = pacer(h, MiB / 2)
      try {
        return await follow(stream, pace.pause)
      } finally {
        pace.stop()
      }
    })
    assert.equal(seen.types.restart, 1, 'the restart, read from the ring')
    assert.equal(got.bytes, 4 * MiB)
    assertNoGaps(got.seqs)
    const restart = got.events.find((e) => e.type === 'restart')
    assert.deepEqual([restart.attempt, restart.exit.code], [1, 3])
    const i = got.types.indexOf('restart')
    assert.equal(got.types[i - 1], 'stdout', 'after the first run')
    assert.equal(got.types[i + 1], 'stdout', 'before the second')
    assert.equal(got.types.at(-1), 'terminal')
    assert.equal(got.events.at(-1).exit.code, 3)
  })

  it('a reader that falls behind the ring goes on as bytes from where it lost track: all of it from the log files, or told what it missed without them', async () => {
    for (const logDirectory of [undefined, false]) {
      // A log file that holds the whole flood (by default the files keep its last 16 MiB or so).
      const { sb } = await sandboxes.start(logDirectory === false ? { logDirectory: false } : { logMaxBytes: 128 * MiB })
      let held = false
      const seen = { rings: 0, types: {}, overtaken: 0 }
      const { result: got } = await countingEvents(async () => {
        // 4 MiB paced by the reader, which reads them from the ring; then 64 MiB at full speed.
        const h = await sb.processes.spawn(`${chunks(4, MiB)}; head -c ${64 * MiB} /dev/zero; printf end`, { maxRetainedBytes: 0 })
        const stream = await h.nativeHandle.logs({ follow: true })
        const pace = pacer(h, MiB)
        try {
          // Once it has read from the ring, it stops reading until the process has ended.
          return await follow(stream, async (bytes) => {
            if (held) return
            if (!(seen.types.stdout > 0 && bytes >= 2 * MiB)) return pace.pause(bytes)
            held = true
            pace.stop()
            await h.sendStdin('gggg')
            await h.wait()
          })
        } finally {
          pace.stop()
        }
      }, seen)
      assert.ok(held)
      assert.ok(seen.types.stdout > 0, 'read from the ring before it fell behind')
      assert.ok(seen.overtaken > 0, 'the writer overtook it')
      assert.equal(got.types.at(-1), 'terminal')
      if (logDirectory === undefined) {
        assert.equal(got.bytes, 68 * MiB + 3, 'every byte, the rest read from the files')
        assert.ok(!got.types.includes('truncated'))
        assertNoGaps(got.seqs)
      } else {
        assert.ok(got.types.includes('truncated'), 'told what it missed')
        assert.ok(got.bytes < 68 * MiB)
      }
    }
  })

  it('a client that lies about the ring of a log stream is refused; one that never answers its offer is sent bytes', async () => {
    const { sb, socketPath } = await sandboxes.start()
    const h = await sb.processes.spawn(`head -c 1 >/dev/null; head -c ${16 * MiB} /dev/zero`, { maxRetainedBytes: 0 })
    const lies = [
      ['an answer to an offer never made', (c, s) => c.send({ t: 'logShared', s, mapped: true }), /was not offered/],
      ['a stream named by no number', (c) => c.send({ t: 'logRead', s: 'x', seq: 1 }), /by its number/],
      ['a read of a stream not read from the ring', (c, s) => c.send({ t: 'logRead', s, seq: 1 }), /not read from the ring/],
    ]
    const opened = async (c) => {
      c.send({ t: 'call', id: 1, op: 'logsOpen', args: { pid: h.pid, options: { follow: true } } })
      const reply = await nextOf(c, (m) => m.t === 'reply' && m.id === 1)
      return reply.value
    }
    for (const [what, lie, message] of lies) {
      const c = await raw(socketPath).hello({ shared: true })
      const s = await opened(c)
      lie(c, s)
      const refused = await nextOf(c, (m) => m.t === 'refused')
      assert.match(refused.message, message, what)
    }
    // Offered the ring, it maps it, then claims to have read past what it was told of.
    const liar = await raw(socketPath).hello({ shared: true })
    const silent = await raw(socketPath).hello({ shared: true })
    const [s1, s2] = [await opened(liar), await opened(silent)]
    await h.sendStdin('go')
    const offer = await nextOf(liar, (m) => m.t === 'log' && m.share !== undefined)
    const ring = binding.openSharedOutput(liar.greeting.sandbox.sharedOutput, offer.share)
    liar.send({ t: 'logShared', s: s1, mapped: true })
    const wake = await nextOf(liar, (m) => m.t === 'log' && m.upTo !== undefined)
    liar.send({ t: 'logRead', s: s1, seq: wake.upTo + 1_000_000 })
    assert.match((await nextOf(liar, (m) => m.t === 'refused')).message, /past the \d+ it was told of/)
    ring.close()
    // The silent one never answers its offer: it is sent the whole log as bytes, up to the end.
    let bytes = 0
    let credit = 0
    for (;;) {
      const m = await nextOf(silent, (x) => x.t === 'log' && x.s === s2)
      if (m.done) break
      for (const e of m.events ?? []) if (e.data) bytes += e.data.length
      credit += (m.events ?? []).reduce((n, e) => n + (e.data?.length ?? 0), 0)
      if (credit > 1 * MiB) {
        silent.send(protocol.credit(s2, credit))
        credit = 0
      }
    }
    assert.equal(bytes, 16 * MiB)
    assert.equal((await h.wait()).exitCode, 0)
    assert.equal((await (await sb.processes.spawn('echo served')).wait()).stdout, 'served\n')
    silent.socket.destroy()
  })
})
