'use strict'
// Reliability: quick versions of the soak (soak/scenarios.js, the same code as
// `npm run soak` at small sizes), bytes that are not UTF-8, output at exit, and running out of
// descriptors or processes. Real processes only; the figures come from /proc, not from procvisor.
const test = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const { spawnSync } = require('node:child_process')
const procvisor = require('..')
const { ProcessManager, liveProcessCount } = procvisor
const soak = require('../soak/scenarios')
const { tempDir, readablePackageCopy } = require('./helpers')
const { binding } = require('../lib/native/native')

const tmp = tempDir('procvisor-rel-')
const pm = new ProcessManager({ workingDirectory: tmp })
test.after(() => pm.close())

// A leak of one descriptor per spawn would show as hundreds here; a few are the runtime's own.
const FD_SLACK = 5
const RSS_SLACK_MB = 64

function assertClean(r, label) {
  assert.ok(r.after.fds - r.before.fds <= FD_SLACK, `${label}: descriptors ${r.before.fds} → ${r.after.fds}`)
  assert.ok(r.after.rssMB - r.before.rssMB <= RSS_SLACK_MB, `${label}: RSS ${r.before.rssMB} → ${r.after.rssMB} MB`)
  assert.equal(r.after.children, 0, `${label}: children left`)
  assert.equal(r.after.zombies, 0, `${label}: zombies left`)
  assert.equal(r.after.live, 0, `${label}: liveProcessCount`)
}

test.describe('soak, quick', () => {
  test('400 spawn/wait cycles (both faces, 4 in flight): no descriptor, process or memory left', async () => {
    const r = await soak.cycles(400)
    assertClean(r, 'cycles')
    assert.equal(r.badExits, 0)
    assert.equal(r.leftovers, 0)
    assert.ok(r.after.fds - r.mid.fds <= FD_SLACK, `second half: ${r.mid.fds} → ${r.after.fds}`)
  })

  test('exited handles that are kept hold no descriptor (stdin is closed at exit)', async () => {
    const r = await soak.keptHandles(200)
    assert.equal(r.kept, 200)
    assert.ok(r.after.fds - r.before.fds <= FD_SLACK, `descriptors ${r.before.fds} → ${r.after.fds} with 200 handles held`)
  })

  test('200 alive at once, then killed: all alive during, nothing after, no thread per child', async () => {
    const r = await soak.alive(200)
    assert.equal(r.during.live, 200)
    assert.equal(r.during.children, 200)
    // Each child is waited for with a pidfd, not a blocked thread.
    assert.ok(r.during.threads - r.before.threads <= 4, `threads ${r.before.threads} → ${r.during.threads}`)
    assertClean(r, 'alive')
    assert.equal(r.leftovers, 0)
  })

  test('kill storms: while spawning, during close, twice, after exit, from many handles at once', async () => {
    const r = await soak.killStorms(30)
    assert.deepEqual(r.unexpected, [])
    assert.equal(r.leftovers, 0)
    assert.equal(r.launched + r.refused, 30)
    assert.equal(r.after.children, 0)
    assert.equal(r.after.live, 0)
  })

  test('stdin writes racing exit resolve or fail with a stdin code, never hang', async () => {
    const r = await soak.stdinRace(60)
    assert.deepEqual(r.unexpected, [])
    assert.equal(Object.values(r.outcomes).reduce((a, b) => a + b, 0), r.calls)
    assert.equal(r.leftovers, 0)
    assert.equal(r.after.children, 0)
  })

  test('stdin calls made without awaiting reach the child in call order, EOF last', async () => {
    const h = await pm.spawn('cat', { maxRetainedBytes: Infinity })
    const calls = []
    for (let i = 0; i < 300; i++) calls.push(h.sendStdin(i % 2 ? `${i}\n` : Buffer.from(`${i}\n`)))
    calls.push(h.closeStdin())
    await Promise.all(calls)
    const r = await h.wait()
    assert.deepEqual(r.stdout.split('\n').filter(Boolean).map(Number), Array.from({ length: 300 }, (_, i) => i))
  })

  test('sendStdin copies its buffer: reusing it at once does not change what is written', async () => {
    const h = await pm.spawn('cat', { maxRetainedBytes: Infinity })
    const buf = Buffer.from('first\n')
    const p = h.sendStdin(buf)
    buf.write('XXXXX\n')
    await p
    await h.closeStdin()
    assert.equal((await h.wait()).stdout, 'first\n')
  })

  test('a paused logs() stream while the child floods: bounded memory, one run in order after each truncated event', async () => {
    const r = await soak.floodPausedLogs(1_000_000)
    assert.equal(r.exit, 0)
    assert.ok(r.peakGrowthMB < 100, `peak RSS +${r.peakGrowthMB.toFixed(1)} MB`)
    assert.ok(r.truncatedEvents >= 1)
    assert.equal(r.terminal, 1)
    assert.equal(r.inOrder, true)
    assert.equal(r.lastLine, 1_000_000)
  })

  test('a paused reader while the child floods: the child waits in bounded memory, then every byte arrives in order', async () => {
    const r = await soak.floodPausedReader(1_000_000)
    assert.equal(r.exit, 0)
    assert.equal(r.runningWhilePaused, true, 'the paused reader held the producer back')
    assert.ok(r.peakGrowthMB < 100, `peak RSS +${r.peakGrowthMB.toFixed(1)} MB`)
    assert.equal(r.readerEnded, 'end')
    assert.equal(r.inOrder, true)
    assert.equal(r.readLines, 1_000_000)
    assert.equal(r.lastLine, 1_000_000)
  })

  test('a reader made in the turn its handle arrives gets every byte of a child that floods from its first instant', async () => {
    // The caller's turn is made long on purpose (a synchronous 100 ms, as a GC pause or a cold
    // JIT makes it): without a hold at the first byte, the child (about 1 GB/s) overran the
    // bounded log before handle.reader existed, and the reader failed as truncated.
    const h = await pm.spawn('head -c 100000000 /dev/zero', { maxRetainedBytes: 0, stdinMode: 'ignore' })
    const until = Date.now() + 100
    while (Date.now() < until) {
      // the caller's long turn
    }
    let n = 0
    for await (const c of h.reader) n += c.length
    assert.equal(n, 100_000_000)
    assert.equal((await h.wait()).exitCode, 0)
    pm.release(h.pid)
  })

  test('a handle whose reader is never made does not hold its child back', async () => {
    // The hold at the first byte ends once the caller has had its turn with the handle.
    const h = await pm.spawn('head -c 20000000 /dev/zero', { maxRetainedBytes: 0, stdinMode: 'ignore' })
    const r = await h.wait()
    assert.equal(r.exitCode, 0)
    pm.release(h.pid)
  })

  test('launches that settle together: a reader made as its handle arrives gets every byte, a handle without one holds nothing back', async () => {
    // Eight launches in flight settle close together, several within one turn of the loop, and
    // their holds at the first byte end together, at the next turn. Each handle is taken up in
    // the reaction to its own launch: the even ones make a reader there, the odd ones never do.
    const runs = Array.from({ length: 8 }, (_, i) =>
      pm.spawn('head -c 20000000 /dev/zero', { maxRetainedBytes: 0, stdinMode: 'ignore' }).then(async (h) => {
        let n = -1
        if (i % 2 === 0) {
          n = 0
          for await (const c of h.reader) n += c.length
        }
        const r = await h.wait()
        pm.release(h.pid)
        return [n, r.exitCode]
      }),
    )
    assert.deepEqual(await Promise.all(runs), Array.from({ length: 8 }, (_, i) => [i % 2 === 0 ? 20_000_000 : -1, 0]))
  })

  test('a slow onStdout listener on a flood: the child is slowed down, every line arrives once, in order', async () => {
    const r = await soak.floodSlowListener(1_000_000)
    assert.equal(r.exit, 0)
    assert.ok(r.peakGrowthMB < 100, `peak RSS +${r.peakGrowthMB.toFixed(1)} MB`)
    assert.equal(r.gotLines, 1_000_000)
    assert.equal(r.inOrder, true)
  })
})

// ---- bytes ---------------------------------------------------------------------------------------

const BAD = Buffer.concat([
  Buffer.from('ok '),
  Buffer.from([0xff, 0xfe]), // never valid in UTF-8
  Buffer.from([0xc3, 0x28]), // a lead byte followed by a non-continuation
  Buffer.from([0xc0, 0xaf]), // overlong
  Buffer.from([0xed, 0xa0, 0x80]), // a UTF-16 surrogate
  Buffer.from([0xf4, 0x90, 0x80, 0x80]), // above U+10FFFF
  Buffer.from(' é🙂 '),
  Buffer.from(Array.from({ length: 256 }, (_, i) => i)), // every byte value, NUL included
  Buffer.from(' tail '),
  Buffer.from([0xe2, 0x82]), // cut short at the very end
])
const BAD_TEXT = BAD.toString('utf8') // WHATWG decoding: one U+FFFD per maximal bad subpart
const badFile = path.join(tmp, 'bad.bin')
fs.writeFileSync(badFile, BAD)

/** Deterministic pseudo-random bytes (xorshift32). */
function noise(n, start = 0x9e3779b9) {
  const out = Buffer.alloc(n)
  let x = start
  for (let i = 0; i < n; i++) {
    x ^= x << 13
    x ^= x >>> 17
    x ^= x << 5
    out[i] = x & 0xff
  }
  return out
}
const NOISE = noise(1024 * 1024)
const noiseFile = path.join(tmp, 'noise.bin')
fs.writeFileSync(noiseFile, NOISE)

async function readAll(readable) {
  const parts = []
  for await (const c of readable) parts.push(c)
  return Buffer.concat(parts)
}

async function logBytes(p, type) {
  const parts = []
  for await (const e of await p.logs({ replay: true, follow: true })) if (e.type === type) parts.push(Buffer.from(e.data))
  return Buffer.concat(parts)
}

test.describe('bytes', () => {
  test('sanity: the sample has replacement characters and a NUL', () => {
    assert.ok(BAD_TEXT.includes('\ufffd'))
    assert.ok(BAD_TEXT.includes('\u0000'))
    assert.ok(BAD_TEXT.endsWith(' tail \ufffd'))
  })

  test('byte APIs pass invalid UTF-8 and binary through unchanged: output(), logs(), reader', async () => {
    const p = await pm.exec(['cat', badFile])
    const out = await p.output()
    assert.deepEqual(Buffer.from(out.stdout), BAD)
    assert.deepEqual(await logBytes(p, 'stdout'), BAD)
    const e = await pm.exec(['/bin/sh', '-c', 'cat "$0" >&2', badFile])
    assert.deepEqual(Buffer.from((await e.output()).stderr), BAD)
    assert.deepEqual(await logBytes(e, 'stderr'), BAD)
    const h = await pm.spawn(`cat ${badFile}`)
    assert.deepEqual(await readAll(h.reader), BAD)
  })

  test('text views give U+FFFD, exactly as WHATWG decoding: stdout/stderr, listeners, wait(), output(utf8)', async () => {
    let seenOut = ''
    let seenErr = ''
    const h = await pm.spawn(`cat ${badFile}; cat ${badFile} >&2`, { onStdout: (d) => (seenOut += d), onStderr: (d) => (seenErr += d) })
    const r = await h.wait()
    assert.equal(r.stdout, BAD_TEXT)
    assert.equal(r.stderr, BAD_TEXT)
    assert.equal(h.stdout, BAD_TEXT)
    assert.equal(h.stderr, BAD_TEXT)
    assert.equal(seenOut, BAD_TEXT)
    assert.equal(seenErr, BAD_TEXT)
    const p = await pm.exec(['cat', badFile])
    const out = await p.output({ encoding: 'utf8' })
    assert.equal(out.stdout, BAD_TEXT)
    // Matching still works past the bad bytes.
    const m = await (await pm.exec(['cat', badFile])).waitForLog(/tail/)
    assert.equal(m.match, 'tail')
  })

  test('large listener texts: ASCII reads, a character cut between reads, Latin-1-range characters', async () => {
    // Separate writes, so that a pure ASCII read follows one that ends inside a character (the
    // cut byte must become U+FFFD, not vanish), and large ASCII reads surround U+00E9 and U+00FF
    // (whose UTF-8 bytes are not Latin-1).
    const parts = [
      Buffer.concat([Buffer.from('a'.repeat(200_000)), Buffer.from([0xc3])]),
      Buffer.from('b'.repeat(100_000)),
      Buffer.from('c'.repeat(70_000) + 'é ÿ' + 'd'.repeat(70_000)),
      Buffer.from('e'.repeat(300_000)),
    ]
    const files = parts.map((b, i) => {
      const f = path.join(tmp, `part${i}.bin`)
      fs.writeFileSync(f, b)
      return f
    })
    let seen = ''
    const h = await pm.spawn(files.map((f) => `cat ${f}`).join('; sleep 0.05; '), { onStdout: (d) => (seen += d) })
    const r = await h.wait()
    const expected = Buffer.concat(parts).toString('utf8')
    assert.equal(expected.slice(200_000, 200_002), '\ufffdb')
    assert.equal(seen.length, expected.length)
    assert.ok(seen === expected, 'listener text differs from WHATWG decoding')
    assert.ok(r.stdout === expected, 'retained text differs from WHATWG decoding')
  })

  test('bad and split sequences across separate writes decode as if in one piece', async () => {
    // E2 82 | 28 F0 9F | 99 82 20 65 6E 64 E2, each part a separate write 30 ms apart.
    const script = "printf '\\342\\202'; sleep 0.03; printf '(\\360\\237'; sleep 0.03; printf '\\231\\202 end\\342'"
    const whole = Buffer.from([0xe2, 0x82, 0x28, 0xf0, 0x9f, 0x99, 0x82, 0x20, 0x65, 0x6e, 0x64, 0xe2])
    let seen = ''
    const h = await pm.spawn(script, { onStdout: (d) => (seen += d) })
    const r = await h.wait()
    assert.equal(r.stdout, whole.toString('utf8'))
    assert.equal(seen, whole.toString('utf8'))
    assert.equal(r.stdout, '\ufffd(🙂 end\ufffd')
    const p = await pm.exec(['/bin/sh', '-c', script])
    assert.deepEqual(Buffer.from((await p.output()).stdout), whole)
  })

  test('output is never lost when the process exits (or is killed) right after writing: 50 sizes, both faces', async () => {
    const sizes = [0, 1, 2, 3, 4095, 4096, 4097, 65535, 65536, 65537, 131072, 262143, 262144, 262145, 500000, 1000000]
    for (let i = 0; i < 50; i++) {
      const n = i < sizes.length ? sizes[i] : (i * 7919 * 31) % 300_000
      const expected = NOISE.subarray(0, n)
      const p = await pm.exec(['head', '-c', String(n), noiseFile])
      const out = await p.output()
      assert.equal(out.stdout.length, n, `exec head -c ${n}`)
      assert.ok(Buffer.from(out.stdout).equals(expected), `exec head -c ${n}: bytes differ`)
      const script = i % 2 ? `head -c ${n} ${noiseFile}` : `head -c ${n} ${noiseFile}; kill -9 $$`
      const h = await pm.spawn(script, { maxRetainedBytes: 0 })
      const got = await readAll(h.reader)
      assert.ok(got.equals(expected), `spawn "${script}": got ${got.length} of ${n} bytes`)
      const r = await h.wait()
      assert.equal(r.exitCode, i % 2 ? 0 : 128)
      pm.release(h.pid)
    }
  })
})

// ---- resources -----------------------------------------------------------------------------------

const EXHAUST = path.join(__dirname, 'fixtures', 'exhaust.js')

function runExhaust(argv) {
  const r = spawnSync(argv[0], argv.slice(1), { encoding: 'utf8', timeout: 40_000 })
  const line = (r.stdout || '').split('\n').find((l) => l.startsWith('RESULT '))
  assert.ok(line, `no result (status ${r.status}, signal ${r.signal}): ${r.stderr}`)
  const result = JSON.parse(line.slice(7))
  assert.equal(result.hung, undefined, 'the fixture hung')
  assert.equal(result.crashed, undefined, `the fixture crashed: ${result.crashed}`)
  assert.equal(r.status, 0, r.stderr)
  return result
}

function assertExhausted(result, errno) {
  assert.ok(result.rounds.length > 0)
  for (const round of result.rounds) {
    assert.ok(round.launched > 0, 'some processes started before the limit')
    for (const f of [round.failure, round.mastra]) {
      assert.ok(f, 'the limit was never reached')
      assert.equal(f.code, 'PROCESS_SPAWN_FAILED', JSON.stringify(f))
      assert.equal(f.name, 'ProcessSpawnFailedError')
      assert.match(f.message, new RegExp(errno))
    }
    assert.equal(round.liveAfterKill, 0, 'what was started is still killed and reaped')
    assert.equal(round.recovered, 'recovered\nagain\n', 'spawning works again once resources are back')
  }
  assert.equal(result.liveAtEnd, 0)
}

test.describe('resources', () => {
  test('out of descriptors (ulimit -n 64): PROCESS_SPAWN_FAILED with EMFILE, then recovery', () => {
    const result = runExhaust(['/bin/sh', '-c', `ulimit -n 64 && exec "${process.execPath}" "${EXHAUST}" fds`])
    assert.equal(result.rounds.length, 4)
    assertExhausted(result, 'EMFILE')
  })

  test('out of processes (RLIMIT_NPROC 40, as a non-root user): PROCESS_SPAWN_FAILED with EAGAIN, then recovery', (t) => {
    // The kernel does not enforce RLIMIT_NPROC for root (uid 0, CAP_SYS_RESOURCE or CAP_SYS_ADMIN),
    // so as root the fixture runs as "nobody" through setpriv.
    const prlimit = spawnSync('prlimit', ['--version']).status === 0
    const setpriv = spawnSync('setpriv', ['--version']).status === 0
    const root = process.getuid() === 0
    if (!prlimit || (root && !setpriv)) {
      t.skip(`NOT RUN: needs prlimit${root ? ' and setpriv' : ''} (util-linux) to lower RLIMIT_NPROC for a non-root child`)
      return
    }
    const drop = root ? ['setpriv', '--reuid=65534', '--regid=65534', '--clear-groups'] : []
    // "nobody" may not enter this checkout: it runs the fixture from a readable copy.
    const fixture = root ? path.join(readablePackageCopy(t, ['__test__/fixtures/exhaust.js']), '__test__/fixtures/exhaust.js') : EXHAUST
    const result = runExhaust(['prlimit', '--nproc=40', ...drop, process.execPath, fixture, 'procs'])
    assert.notEqual(result.uid, 0)
    assertExhausted(result, 'EAGAIN')
  })
})

// ---- output read on the event loop ---------------------------------------------------------------

/** `seq 1 n` as text. */
function seqText(n) {
  let s = ''
  for (let i = 1; i <= n; i++) s += `${i}\n`
  return s
}

/** Resolves once this thread's event loop has read some lent pipe since `before`. */
async function loopReading(before) {
  const end = Date.now() + 10_000
  while (binding.loopReadCount() === before) {
    if (Date.now() > end) throw new Error('no pipe was lent to the event loop')
    await new Promise((r) => setTimeout(r, 2))
  }
}

test.describe('output read on the event loop', () => {
  test('floods to listeners on both streams are read on the loop: every line once, in order', async () => {
    const before = binding.loopReadCount()
    let out = ''
    let err = ''
    const h = await pm.spawn('seq 1 400000 >&2 & seq 1 600000; wait', { onStdout: (d) => (out += d), onStderr: (d) => (err += d) })
    const r = await h.wait()
    assert.equal(r.exitCode, 0)
    assert.ok(binding.loopReadCount() > before, 'the floods were read by the runtime only')
    const [o, e] = [seqText(600000), seqText(400000)]
    assert.equal(out.length, o.length)
    assert.ok(out === o, 'stdout listener text differs')
    assert.ok(err === e, 'stderr listener text differs')
    assert.ok(o.endsWith(r.stdout) && r.stdout.length === 1024 * 1024, 'the retained tail differs')
  })

  test('kill while the loop reads a flood: the process ends, killed', async () => {
    const before = binding.loopReadCount()
    let n = 0
    const h = await pm.spawn('yes', { onStdout: (d) => (n += d.length) })
    await loopReading(before)
    assert.equal(await h.kill(), true)
    const r = await h.wait()
    assert.equal(r.exitCode, 128)
    assert.equal(r.killed, true)
    assert.ok(n > 0)
  })

  test('a writer outside the group keeps the lent pipe open: the process still finishes, with every byte', async () => {
    const before = binding.loopReadCount()
    let n = 0
    // A duration of this run's own: the cleanup must not kill another run's sleeps.
    const nap = `23.${process.pid}`
    const h = await pm.spawn(`setsid sleep ${nap} & head -c 16777216 /dev/zero`, { onStdout: (d) => (n += d.length) })
    const r = await Promise.race([h.wait(), new Promise((_, rej) => setTimeout(() => rej(new Error('wait() hung')), 10_000))])
    spawnSync('pkill', ['-f', `^sleep ${nap.replace('.', '\\.')}$`])
    assert.equal(r.exitCode, 0)
    assert.ok(binding.loopReadCount() > before, 'the flood was read by the runtime only')
    assert.equal(n, 16777216)
  })

  test('a reader and a listener on one flood; the reader pauses, then resumes: both get every byte', async () => {
    const before = binding.loopReadCount()
    let seen = ''
    const h = await pm.spawn('seq 1 500000', { onStdout: (d) => (seen += d) })
    const parts = []
    let got = 0
    let paused = false
    const ended = new Promise((resolve, reject) => {
      h.reader.on('data', (c) => {
        parts.push(c)
        got += c.length
        if (!paused && got > 512 * 1024) {
          paused = true
          h.reader.pause()
          setTimeout(() => h.reader.resume(), 300)
        }
      })
      h.reader.on('end', resolve)
      h.reader.on('error', reject)
    })
    const [r] = await Promise.all([h.wait(), ended])
    assert.equal(r.exitCode, 0)
    assert.ok(paused)
    assert.ok(binding.loopReadCount() > before, 'the flood was read by the runtime only')
    const expected = seqText(500000)
    assert.ok(seen === expected, 'listener text differs')
    assert.ok(Buffer.concat(parts).toString('latin1') === expected, 'reader bytes differ')
  })
})

test.describe('a reader woken on its own thread', () => {
  test('a flood to a reader alone is read on the loop: every line once, in order', async () => {
    const before = binding.loopReadCount()
    const h = await pm.spawn('seq 1 600000', { maxRetainedBytes: 0 })
    const parts = []
    for await (const c of h.reader) parts.push(c)
    assert.equal((await h.wait()).exitCode, 0)
    assert.ok(binding.loopReadCount() > before, 'the flood was read by the runtime only')
    assert.ok(Buffer.concat(parts).toString('latin1') === seqText(600000), 'reader bytes differ')
    pm.release(h.pid)
  })

  test('an async iteration of a flood gets the takes as they are, never joined into larger Buffers', async () => {
    // A join copies every byte once more: with several takes queued, read() concatenated them
    // (half the chunks of such a flood were joins of 512 KiB).
    const h = await pm.spawn('head -c 67108864 /dev/zero', { maxRetainedBytes: 0 })
    let n = 0
    let largest = 0
    for await (const c of h.reader) {
      n += c.length
      largest = Math.max(largest, c.length)
    }
    assert.equal(n, 67108864)
    assert.ok(largest <= 256 * 1024, `a chunk of ${largest} bytes`)
    assert.equal((await h.wait()).exitCode, 0)
    pm.release(h.pid)
  })

  test('a reader that stops reading does not keep a dead process unfinished, writer outside the group or not', async () => {
    // The reader is made (it holds the child from the first byte) and never read. 560 KiB is
    // more than the half log the reader may lag by, and the rest fits in a pipe of any size,
    // so the child writes everything and exits while the runtime waits for the reader: the
    // process must finish once the reader has made no progress for a while.
    const nap = `29.${process.pid}`
    for (const command of [`setsid sleep ${nap} & head -c 573440 /dev/zero`, 'head -c 573440 /dev/zero']) {
      const h = await pm.spawn(command, { maxRetainedBytes: 0 })
      const reader = h.reader
      const r = await Promise.race([h.wait(), new Promise((_, rej) => setTimeout(() => rej(new Error(`wait() hung: ${command}`)), 15_000))])
      assert.equal(r.exitCode, 0)
      // What the bounded log could not keep for it is lost to this reader, and only so.
      const failures = []
      reader.on('error', (e) => failures.push(e.code))
      reader.resume()
      await new Promise((resolve) => reader.once('close', resolve))
      assert.ok(failures.every((c) => c === 'PROCESS_OUTPUT_TRUNCATED'), failures.join())
      pm.release(h.pid)
    }
    spawnSync('pkill', ['-f', `^sleep ${nap.replace('.', '\\.')}$`])
  })

  test('Node stays alive while only a reader waits for output, and exits once it ends', () => {
    const script = `
      const { ProcessManager } = require(${JSON.stringify(path.join(__dirname, '..'))})
      const pm = new ProcessManager()
      pm.spawn('sleep 0.4; echo late').then((h) => h.reader.on('data', (c) => process.stdout.write('got ' + c)))
    `
    const r = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8', timeout: 20_000 })
    assert.equal(r.status, 0, r.stderr)
    assert.equal(r.stdout, 'got late\n')
  })
})

test('launches one right after another (a launcher stands by for them) keep their output, exit codes and typed errors', async () => {
  // Each end stands the launcher by, so most of these launches are made on its thread (and their
  // processes supervised there), the rest on the runtime: either way each must answer as its
  // request says.
  const missing = path.join(tmp, 'no-such-dir')
  const before = binding.launcherLaunchCount()
  for (let i = 0; i < 40; i++) {
    if (i % 4 === 3) {
      await assert.rejects(pm.exec(['/bin/true'], { cwd: missing }), (e) => e.code === 'INVALID_PROCESS_CWD' && e instanceof procvisor.InvalidProcessCwdError)
      await assert.rejects(pm.spawn('true', { cwd: missing }), (e) => e.code === 'INVALID_PROCESS_CWD')
      continue
    }
    const p = await pm.exec(['/bin/sh', '-c', 'echo "$1"; exit "$2"', 'sh', `line ${i}`, String(i % 3)])
    const out = await p.output({ encoding: 'utf8' })
    assert.equal(out.stdout, `line ${i}\n`)
    assert.equal(await p.exitCode, i % 3)
    const h = await pm.spawn(`printf ${i}`)
    assert.equal((await h.wait()).exitCode, 0)
    assert.equal(h.stdout, String(i))
    pm.release(h.pid)
  }
  // About 55 of the 90 launches here, on this machine's debug build.
  assert.ok(binding.launcherLaunchCount() > before, 'no launch was made by the launcher')
  await soak.settle()
  assert.equal(liveProcessCount(), 0)
})

test('processes launched right after an end (supervised on the launcher\'s thread) keep their timeout, stdin, waits and kill; a burst goes to both', async () => {
  // A launch right after an awaited end is made by the launcher when it stands by, and the
  // process is read and supervised on that thread to its end: its timers, its stdin writer and
  // its waits must work there as on the runtime. The stand-by adapts to how soon launches follow
  // ends, so each case is tried until the launcher made it (`launcherLaunchCount()`), and every
  // try is checked in full.
  const afterAnEnd = async () => assert.equal(await (await pm.exec(['/bin/true'])).exitCode, 0)
  const onTheLauncher = async (name, fn) => {
    for (let tries = 0; tries < 50; tries++) {
      await afterAnEnd()
      const before = binding.launcherLaunchCount()
      // `fn` tells, right after its launch, whether the launcher made it.
      if (await fn(() => binding.launcherLaunchCount() > before)) return
    }
    assert.fail(`${name}: never launched by the launcher in 50 tries`)
  }
  await onTheLauncher('a timeout', async (launched) => {
    const slow = await pm.exec(['sleep', '30'], { timeout: 50 })
    const onIt = launched()
    assert.deepEqual(await slow.waitForExit(), { code: 143, signal: 15, timedOut: true })
    return onIt
  })
  await onTheLauncher('stdin', async (launched) => {
    const cat = await pm.spawn('cat')
    const onIt = launched()
    await cat.sendStdin('to and fro\n')
    await cat.closeStdin()
    assert.equal((await cat.wait()).exitCode, 0)
    assert.equal(cat.stdout, 'to and fro\n')
    pm.release(cat.pid)
    return onIt
  })
  await onTheLauncher('waitForLog and kill', async (launched) => {
    const server = await pm.exec(['/bin/sh', '-c', 'echo ready; exec sleep 30'])
    const onIt = launched()
    await server.waitForLog('ready', { timeout: 10_000 })
    await server.kill(9)
    assert.deepEqual(await server.waitForExit(), { code: 137, signal: 9, timedOut: false })
    return onIt
  })
  // A flood read on the launcher's thread does not hold back the launches that follow it: they
  // go to the runtime while the launcher reads, and every byte of the flood is accounted for.
  await onTheLauncher('a flood', async (launched) => {
    const flood = await pm.spawn('head -c 200000000 /dev/zero', { maxRetainedBytes: 4096 })
    const onIt = launched()
    const finished = flood.wait()
    for (let i = 0; i < 10; i++) await afterAnEnd()
    const r = await finished
    assert.equal(r.exitCode, 0)
    assert.equal(r.stdout.length + r.stdoutDroppedBytes, 200_000_000)
    pm.release(flood.pid)
    return onIt
  })
  // A burst right after an end: a stand-by takes one launch, the rest go to the runtime; all of
  // them answer. The burst's processes wait for their stdin, so that none ends while the burst
  // is launched: an end stands the launcher by again, and it would rightly take one more.
  await afterAnEnd()
  const before = binding.launcherLaunchCount()
  const burst = await Promise.all(Array.from({ length: 16 }, (_, i) => pm.spawn(`read x && echo "n${i} $x"`)))
  const onIt = binding.launcherLaunchCount() - before
  assert.ok(onIt <= 1, `${onIt} launches of the burst on the launcher`)
  // Each ends once it has read its line.
  await Promise.all(burst.map((h) => h.sendStdin('go\n')))
  const ends = await Promise.all(burst.map((h) => h.wait()))
  assert.deepEqual(ends.map((r) => [r.exitCode, r.stdout]), Array.from({ length: 16 }, (_, i) => [0, `n${i} go\n`]))
  for (const h of burst) pm.release(h.pid)
  await soak.settle()
  assert.equal(liveProcessCount(), 0)
})

test('nothing of this file is left running', async () => {
  await pm.close()
  await soak.settle()
  assert.equal(liveProcessCount(), 0)
  assert.deepEqual(soak.children(), { live: 0, zombies: 0 })
})
