'use strict'
// The `shutdown` option: how `close()`, `stop()` and a Mastra-shaped `kill()` end a process. Its
// signal comes first and the child sees it; SIGKILL follows after `timeoutMs` for one that
// ignores it; without the option a process is killed at once, as it always was.
const test = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const { ProcessManager } = require('..')
const { tempDir } = require('./helpers')

const tmp = tempDir('procvisor-shutdown-')
const pm = new ProcessManager({ workingDirectory: tmp })
test.after(() => pm.close())

/** A node child that prints 'up', and on SIGTERM prints and exits 0 (`polite`) or prints and goes on. */
function child(polite) {
  const onTerm = polite ? "console.log('got SIGTERM'); process.exit(0)" : "console.log('ignoring SIGTERM')"
  return [process.execPath, '-e', `process.on('SIGTERM', () => { ${onTerm} }); console.log('up'); setInterval(() => {}, 1000)`]
}

/** `argv` as one shell command line. */
const shell = (argv) => `exec ${argv.map((a) => `'${a.replace(/'/g, "'\\''")}'`).join(' ')}`

test('stop() sends the shutdown signal, which the child traps, and resolves with its exit', async () => {
  const p = await pm.exec(child(true), { shutdown: { signal: 'SIGTERM', timeoutMs: 10_000 } })
  await p.waitForLog('up')
  const exit = await p.stop()
  assert.deepEqual(exit, { code: 0, timedOut: false })
  const out = await p.output({ encoding: 'utf8' })
  assert.equal(out.stdout, 'up\ngot SIGTERM\n')
})

test('a child that ignores the shutdown signal is killed once timeoutMs has passed', async () => {
  const p = await pm.exec(child(false), { shutdown: { timeoutMs: 300 } })
  await p.waitForLog('up')
  const started = Date.now()
  const exit = await p.stop()
  assert.equal(exit.signal, 9)
  assert.ok(Date.now() - started >= 290, 'SIGKILL waited for timeoutMs')
  assert.equal((await p.output({ encoding: 'utf8' })).stdout, 'up\nignoring SIGTERM\n')
})

test('close() ends each process through its shutdown, and without one kills it at once', async () => {
  const own = new ProcessManager({ workingDirectory: tmp })
  const gentle = await own.exec(child(true), { shutdown: {} })
  const handle = await own.spawn(shell(child(true)), { shutdown: { signal: 'TERM' } })
  const abrupt = await own.exec(child(true))
  await Promise.all([gentle.waitForLog('up'), handle.waitForLog('up'), abrupt.waitForLog('up')])
  const exits = [gentle.waitForExit(), handle.wait(), abrupt.waitForExit()]
  await own.close()
  const [g, h, a] = await Promise.all(exits)
  assert.deepEqual(g, { code: 0, timedOut: false })
  assert.equal(h.exitCode, 0)
  assert.equal(h.stdout, 'up\ngot SIGTERM\n')
  assert.equal(a.signal, 9, 'no shutdown option: SIGKILL, as before')
})

test("a spawned handle's kill() without a signal goes through its shutdown; with one, sends that", async () => {
  const h = await pm.spawn(shell(child(true)), { shutdown: { timeoutMs: 10_000 } })
  await h.waitForLog('up')
  assert.equal(await h.kill(), true)
  const r = await h.wait()
  assert.equal(r.exitCode, 0)
  assert.equal(r.stdout, 'up\ngot SIGTERM\n')
  const plain = await pm.spawn(shell(child(true)))
  await plain.waitForLog('up')
  await plain.kill()
  assert.equal((await plain.wait()).stdout, 'up\n', 'without shutdown kill() is SIGKILL')
})

test('stop() of a service ends it for good through its shutdown', async () => {
  const p = await pm.exec(child(true), { shutdown: { timeoutMs: 10_000 }, restart: { policy: 'always', backoffMs: { initial: 20 } } })
  await p.waitForLog('up')
  const exit = await p.stop()
  assert.equal(exit.code, 0)
  assert.equal(exit.restarts, 0)
  assert.equal((await p.status()).state, 'exited')
})
