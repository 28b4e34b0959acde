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
