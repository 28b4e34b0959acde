'use strict'
// A manager's logDirectory: every process's output log also goes to rotated files, and logs()
// reads back through them past what the 1 MiB memory ring holds.
const test = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const procvisor = require('..')
const { eventually } = require('./helpers')

const MiB = 1024 * 1024

function tempDir(tag) {
  return fs.mkdtempSync(path.join(os.tmpdir(), `procvisor-logfiles-${tag}-`))
}

/** A node child that writes lines `line <n> …` numbered 1.. until `bytes`, then exits 0. */
function linesArgv(bytes) {
  const script = `
    const pad = 'x'.repeat(88)
    let n = 0, written = 0
    function more() {
      for (;;) {
        if (written >= ${bytes}) return
        let block = ''
        for (let i = 0; i < 2000; i++) block += 'line ' + String(++n).padStart(8, '0') + ' ' + pad + '\\n'
        written += block.length
        if (!process.stdout.write(block)) return process.stdout.once('drain', more)
      }
    }
    more()`
  return [process.execPath, '-e', script]
}

/** Every stdout byte of `events` joined, as text. */
function stdoutText(events) {
  return Buffer.concat(events.filter((e) => e.type === 'stdout').map((e) => Buffer.from(e.data))).toString()
}

/** Asserts that `text` is whole lines numbered `from`, `from + 1`, … in order; returns the last. */
function assertConsecutive(text, from) {
  assert.ok(text.endsWith('\n'), 'the text ends inside a line')
  const lines = text.slice(0, -1).split('\n')
  let want = from
  for (const line of lines) {
    const n = Number(line.slice(5, 13))
    if (n !== want) assert.fail(`expected line ${want}, got ${JSON.stringify(line.slice(0, 20))}`)
    want++
  }
  return want - 1
}

async function collect(stream) {
  const out = []
  for await (const e of stream) out.push(e)
  return out
}

test('a cursor from the start of 50 MiB resumes through 4 MiB files: every line once, in order', { timeout: 120_000 }, async () => {
  const dir = tempDir('resume')
  const pm = new procvisor.ProcessManager({ logDirectory: dir, logKeep: 20 })
  try {
    const p = await pm.exec(linesArgv(50 * MiB))
    const reader = (await p.logs({ follow: true })).getReader()
    const first = (await reader.read()).value
    assert.equal(first.type, 'stdout')
    await reader.cancel()
    assert.equal((await p.waitForExit()).code, 0)
    const events = await collect(await p.logs({ since: first.cursor }))
    assert.deepEqual(events.filter((e) => e.type === 'truncated'), [])
    assert.equal(events.at(-1).type, 'terminal')
    const text = Buffer.from(first.data).toString() + stdoutText(events)
    assert.ok(text.length >= 50 * MiB, `only ${text.length} bytes`)
    const last = assertConsecutive(text, 1)
    assert.equal(last * 103, text.length)
    // logs() from the start reads the files first, too.
    const all = await collect(await p.logs())
    assert.equal(all[0].type, 'stdout')
    assert.equal(stdoutText(all).length, text.length)
    const files = fs.readdirSync(dir).filter((f) => f.startsWith(`${p.id}.log`))
    assert.ok(files.length >= 12 && files.length <= 20, files.join(' '))
    for (const f of files) assert.ok(fs.statSync(path.join(dir, f)).size <= 4 * MiB, f)
  } finally {
    await pm.close()
    fs.rmSync(dir, { recursive: true, force: true })
  }
})

test('a follower that falls behind a running flood reads on through files rotating under it, nothing lost', { timeout: 120_000 }, async () => {
  const dir = tempDir('follow')
  const pm = new procvisor.ProcessManager({ logDirectory: dir, logMaxBytes: MiB, logKeep: 64 })
  try {
    const p = await pm.exec(linesArgv(30 * MiB))
    // Behind by more than the ring before it reads at all, and slower than the child after.
    await new Promise((r) => setTimeout(r, 300))
    const chunks = []
    let n = 0
    let truncated = 0
    for await (const e of await p.logs({ follow: true })) {
      if (e.type === 'truncated') truncated++
      if (e.type === 'stdout') chunks.push(Buffer.from(e.data))
      if (++n % 16 === 0) await new Promise((r) => setTimeout(r, 1))
    }
    assert.equal(truncated, 0)
    const text = Buffer.concat(chunks).toString()
    assert.equal(assertConsecutive(text, 1) * 103, text.length)
    assert.ok(text.length >= 30 * MiB)
  } finally {
    await pm.close()
    fs.rmSync(dir, { recursive: true, force: true })
  }
})

test('rotation keeps logKeep files, and a cursor older than them gets truncated then goes on to the end', { timeout: 60_000 }, async () => {
  const dir = tempDir('rotate')
  const pm = new procvisor.ProcessManager({ logDirectory: dir, logMaxBytes: MiB, logKeep: 3 })
  try {
    const p = await pm.exec(linesArgv(8 * MiB))
    assert.equal((await p.waitForExit()).code, 0)
    const files = fs.readdirSync(dir).sort()
    assert.deepEqual(files, [`${p.id}.log`, `${p.id}.log.1`, `${p.id}.log.2`])
    const events = await collect(await p.logs())
    assert.equal(events[0].type, 'truncated')
    assert.deepEqual(events.slice(1).filter((e) => e.type === 'truncated'), [])
    assert.equal(events.at(-1).type, 'terminal')
    const text = stdoutText(events)
    // More than the memory ring keeps: the start came from the files.
    assert.ok(text.length > 2 * MiB, `only ${text.length} bytes after truncated`)
    // Chunks split lines, so the kept text may start inside one: the first whole line starts
    // after the first newline, and it is not line 1 (the start was dropped).
    const cut = text.indexOf('\n') + 1
    const firstLine = Number(text.slice(cut + 5, cut + 13))
    assert.ok(firstLine > 1, `the kept text starts at line ${firstLine}`)
    const last = assertConsecutive(text.slice(cut), firstLine)
    assert.ok(last * 103 >= 8 * MiB)
    // The truncated event's cursor resumes where the kept events start.
    const again = await collect(await p.logs({ since: events[0].cursor }))
    assert.equal(again[0].type, 'stdout')
    assert.equal(stdoutText(again), text)
  } finally {
    await pm.close()
    fs.rmSync(dir, { recursive: true, force: true })
  }
})

test('a logDirectory that is a file, under a file, read-only, or bad numbers are refused before anything runs', () => {
  const dir = tempDir('refuse')
  try {
    const file = path.join(dir, 'plain')
    fs.writeFileSync(file, 'x')
    const bad = [
      { logDirectory: file },
      { logDirectory: path.join(file, 'sub') },
      // No file can be created there, whoever runs this.
      { logDirectory: '/proc/self' },
      { logDirectory: '' },
      { logDirectory: 42 },
      { logDirectory: dir, logMaxBytes: 10 },
      { logDirectory: dir, logKeep: 0 },
      { logDirectory: dir, logKeep: 1.5 },
      { logKeep: 3 },
    ]
    if (process.getuid() !== 0) {
      const ro = path.join(dir, 'ro')
      fs.mkdirSync(ro, { mode: 0o555 })
      bad.push({ logDirectory: ro })
    }
    for (const options of bad) {
      assert.throws(() => new procvisor.ProcessManager(options), procvisor.InvalidProcessOptionError, JSON.stringify(options))
    }
    // A missing one is created, relative to the manager's working directory.
    const pm = new procvisor.ProcessManager({ workingDirectory: dir, logDirectory: 'a/b' })
    assert.ok(fs.statSync(path.join(dir, 'a/b')).isDirectory())
    return pm.close()
  } finally {
    fs.rmSync(dir, { recursive: true, force: true })
  }
})

test('output reaches onStdout and handle.stdout unchanged, and its file has it', { timeout: 30_000 }, async () => {
  const dir = tempDir('listeners')
  const pm = new procvisor.ProcessManager({ logDirectory: dir })
  try {
    let heard = ''
    const h = await pm.spawn('seq 1 50000; echo done >&2', { onStdout: (s) => (heard += s) })
    assert.equal(await h.wait().then((r) => r.exitCode), 0)
    const want = Array.from({ length: 50000 }, (_, i) => `${i + 1}\n`).join('')
    assert.equal(heard, want)
    assert.equal(h.stdout, want)
    assert.equal(h.stderr, 'done\n')
    // The file is written off the process's path, shortly after.
    const file = path.join(dir, `${h.id}.log`)
    const has = (s) => fs.existsSync(file) && fs.readFileSync(file).includes(Buffer.from(s))
    assert.ok(await eventually(() => has('49999\n50000\n') && has('done\n'), 5000), 'the file lacks the output')
  } finally {
    await pm.close()
    fs.rmSync(dir, { recursive: true, force: true })
  }
})

test('a log directory gone under the manager stops disk logging only, said once: the process and its output go on', { timeout: 30_000 }, () => {
  const dir = tempDir('gone')
  // In a Node process of its own, to read the note procvisor writes on its stderr.
  const script = `
    const procvisor = require(${JSON.stringify(path.join(__dirname, '..'))})
    const fs = require('node:fs')
    ;(async () => {
      const pm = new procvisor.ProcessManager({ logDirectory: ${JSON.stringify(dir)} })
      fs.rmSync(${JSON.stringify(dir)}, { recursive: true, force: true })
      const h = await pm.spawn('seq 1 1000; seq 1 1000 >&2')
      const { exitCode } = await h.wait()
      const events = []
      for await (const e of await h.logs()) events.push(e.type)
      console.log(JSON.stringify({ exitCode, stdout: h.stdout.length, events: events.length, last: events.at(-1) }))
      await pm.close()
    })()`
  const r = require('node:child_process').spawnSync(process.execPath, ['-e', script], { encoding: 'utf8', timeout: 20_000 })
  const seen = JSON.parse(r.stdout)
  assert.equal(seen.exitCode, 0)
  assert.equal(seen.stdout, Array.from({ length: 1000 }, (_, i) => `${i + 1}\n`).join('').length)
  assert.equal(seen.last, 'terminal')
  const notes = r.stderr.split('\n').filter((l) => l.includes('is no longer written to'))
  assert.equal(notes.length, 1, r.stderr)
  assert.match(notes[0], /^procvisor: process p\d+: output is no longer written to .*gone.*: No such file or directory/)
  assert.equal(fs.existsSync(dir), false)
})

test("close() resolves once the logs are in their files: nothing is written after it, and the directory goes at once", { timeout: 60_000 }, async () => {
  const dir = tempDir('close')
  const logs = path.join(dir, 'logs')
  const pm = new procvisor.ProcessManager({ workingDirectory: dir, logDirectory: logs, logMaxBytes: MiB, logKeep: 100 })
  // Floods faster than files are written: the writer is still behind when the process is killed.
  await pm.exec(['sh', '-c', 'head -c 400000000 /dev/zero'])
  await eventually(() => fs.readdirSync(logs).length >= 2, 10_000)
  await pm.close()
  const sizes = () => fs.readdirSync(logs).map((f) => `${f} ${fs.statSync(path.join(logs, f)).size}`).sort().join('\n')
  const atClose = sizes()
  await new Promise((r) => setTimeout(r, 300))
  assert.equal(sizes(), atClose, 'a file changed or was made after close() resolved')
  fs.rmSync(dir, { recursive: true })
  assert.equal(fs.existsSync(dir), false)
})
