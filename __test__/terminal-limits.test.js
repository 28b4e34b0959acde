'use strict'
// The screen of a terminal is bounded whatever size is asked: a window past the cap of cells is a
// typed error, never an allocation that ends Node. Each case runs in a child Node process (with
// an address-space limit, so an unbounded screen fails fast rather than eat the machine's memory)
// so this runner survives a crash and reports it.
const test = require('node:test')
const assert = require('node:assert/strict')
const { spawnSync } = require('node:child_process')
const path = require('node:path')

const FIXTURE = path.join(__dirname, 'fixtures', 'terminal-sizes.js')

function run(which) {
  const r = spawnSync('/bin/sh', ['-c', 'ulimit -v 3000000; exec "$0" "$@"', process.execPath, FIXTURE, which], {
    encoding: 'utf8',
    timeout: 60_000,
  })
  assert.equal(r.status, 0, `the child ended with ${r.status ?? r.signal}: ${r.stderr.slice(-2000)}`)
  return JSON.parse(r.stdout.trim().split('\n').pop())
}

const refused = (r, size) => {
  assert.equal(r.error, 'InvalidProcessOptionError', JSON.stringify(r))
  assert.equal(r.code, 'INVALID_PROCESS_OPTION')
  assert.match(r.message, /1048576 cells/)
  assert.match(r.message, new RegExp(size))
}

test('createTerminal refuses a window past 1048576 cells and keeps one at the cap', () => {
  const r = run('create')
  refused(r.huge, '65535 × 65535')
  refused(r.past, '1025 × 1024')
  assert.equal(r.wide, 'created')
  refused(r.tall, '65535 × 17')
  assert.deepEqual(r.atCap, { cols: 1024, rows: 1024, first: '1024 1024' })
})

test('terminal.resize past the cap is refused and changes nothing', () => {
  const r = run('resize')
  refused(r.huge, '65535 × 65535')
  assert.deepEqual(r.after, { cols: 80, rows: 24 })
  assert.equal(r.wide, 65535)
})

test('a process on a terminal without a screen keeps any window size', () => {
  assert.deepEqual(run('plain'), { plain: 'kept' })
})

test('a 64 MiB window title or an endless OSC string leaves memory alone, and later output renders', async (tc) => {
  const fs = require('node:fs')
  const os = require('node:os')
  const { ProcessManager } = require('..')
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'procvisor-osc-'))
  const pm = new ProcessManager({ workingDirectory: dir })
  try {
    const big = "head -c 67108864 /dev/zero | tr '\\0' t"
    const script = [
      'stty -echo',
      // An OSC that has not ended yet: everything after it is part of it, so far.
      `printf '\\033]2;'; ${big}; : > open-done`,
      'read line',
      // Its end (BEL), then a 64 MiB title ended by ST, then a short one and a line.
      "printf '\\007\\033]0;'",
      big,
      "printf '\\033\\\\\\033]2;short title\\007after-title\\n'",
      'sleep 600',
    ].join('\n')
    const rss = () => process.memoryUsage().rss
    const before = rss()
    const t = await pm.createTerminal({ command: ['sh', '-c', script], cols: 40, rows: 5 })
    const { eventually } = require('./helpers')
    assert.ok(await eventually(() => fs.existsSync(path.join(dir, 'open-done')), 30_000), 'the child wrote the open OSC')
    const open = rss() - before
    await t.write('\r')
    const snap = await eventually(async () => {
      const s = await t.getSnapshot()
      return s.lines.some((l) => l.includes('after-title')) && s
    }, 30_000)
    const after = rss() - before
    const mib = (n) => `${(n / 1048576).toFixed(1)} MiB`
    const grew = `RSS grew by ${mib(open)} with a 64 MiB OSC open, by ${mib(after)} after a 64 MiB title`
    tc.diagnostic(grew)
    assert.ok(open < 40 * 1048576 && after < 40 * 1048576, grew)
    assert.ok(snap, 'the line after the titles renders')
    assert.equal(snap.title, 'short title')
    await t.terminate()
  } finally {
    await pm.close()
    fs.rmSync(dir, { recursive: true, force: true })
  }
})
