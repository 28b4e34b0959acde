'use strict'
// A wait that the process's death made impossible says which process (the pid the program holds)
// died how, with the end of its stderr: on `Process` (exec) and on the Mastra-surface handle.
const test = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const { ProcessManager, ProcessExitedBeforeReadyError, ProcessExitedBeforeLogError } = require('..')
const { tempDir, freePort, rejection } = require('./helpers')

const tmp = tempDir('procvisor-detail-')
const pm = new ProcessManager({ workingDirectory: tmp })
test.after(() => pm.close())

const CRASH = ['sh', '-c', 'echo "Error: listen EADDRINUSE: address already in use" >&2; exit 3']

function assertDetail(err, Class, p, { exitCode, signal, tail }) {
  assert.ok(err instanceof Class, `${err && err.name}: ${err && err.message}`)
  const pid = Number(p.pid)
  assert.equal(err.pid, pid)
  assert.equal(err.exitCode, exitCode)
  assert.equal(err.signal, signal)
  assert.ok(err.stderrTail.includes(tail), err.stderrTail)
  assert.match(err.message, new RegExp(`^process ${pid} `))
  assert.ok(!err.message.includes(p.id), `the message names the internal id ${p.id}: ${err.message}`)
  assert.ok(err.message.includes(signal === undefined ? `code ${exitCode}` : `signal ${signal}`), err.message)
  assert.ok(err.message.includes(tail), err.message)
}

test('waitForPort on a process that exits: pid, exit code and stderr', async () => {
  const p = await pm.exec(CRASH)
  const err = await rejection(p.waitForPort(await freePort(), { timeout: 10_000 }))
  assertDetail(err, ProcessExitedBeforeReadyError, p, { exitCode: 3, signal: undefined, tail: 'EADDRINUSE' })
})

test('waitForLog on a process that exits: pid, exit code and stderr', async () => {
  const p = await pm.exec(CRASH)
  const err = await rejection(p.waitForLog('listening', { timeout: 10_000 }))
  assertDetail(err, ProcessExitedBeforeLogError, p, { exitCode: 3, signal: undefined, tail: 'EADDRINUSE' })
})

test('a process killed by a signal: the signal is named', async () => {
  const p = await pm.exec(['sh', '-c', 'echo "out of memory" >&2; kill -9 $$'])
  const err = await rejection(p.waitForLog('never', { timeout: 10_000 }))
  assertDetail(err, ProcessExitedBeforeLogError, p, { exitCode: 137, signal: 9, tail: 'out of memory' })
})

test('the Mastra-surface handle (spawn) carries the same detail', async () => {
  const h = await pm.spawn(CRASH.map((a) => `'${a}'`).join(' '))
  const err = await rejection(h.waitForPort(await freePort(), { timeout: 10_000 }))
  assertDetail(err, ProcessExitedBeforeReadyError, h, { exitCode: 3, signal: undefined, tail: 'EADDRINUSE' })
})

test('the stderr tail is bounded and is the end; the message quotes only its start', async () => {
  const p = await pm.exec(['sh', '-c', "head -c 200000 /dev/zero | tr '\\0' x >&2; printf '\\nthe last line\\n' >&2; exit 1"])
  const err = await rejection(p.waitForLog('never', { timeout: 10_000 }))
  assert.ok(err instanceof ProcessExitedBeforeLogError)
  assert.ok(Buffer.byteLength(err.stderrTail) <= 4096, `${Buffer.byteLength(err.stderrTail)} bytes`)
  assert.ok(err.stderrTail.endsWith('the last line\n'), err.stderrTail.slice(-40))
  assert.ok(err.message.length < 600, `a message of ${err.message.length} characters`)
  assert.equal(err.exitCode, 1)
})

test('no stderr: the tail is empty and the message says so by leaving it out', async () => {
  const p = await pm.exec(['sh', '-c', 'exit 5'])
  const err = await rejection(p.waitForPort(await freePort(), { timeout: 10_000 }))
  assert.equal(err.stderrTail, '')
  assert.equal(err.exitCode, 5)
  assert.doesNotMatch(err.message, /stderr/)
})
