'use strict'
// Signals by name ('SIGTERM', or 'TERM' without the prefix) wherever a signal number is taken,
// read by the native rule with this platform's numbers; an unknown name is refused, named, and
// nothing is sent.
const test = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const os = require('node:os')
const { ProcessManager, InvalidProcessSignalError } = require('..')
const { tempDir, alive } = require('./helpers')

const tmp = tempDir('procvisor-signames-')
const pm = new ProcessManager({ workingDirectory: tmp })
test.after(() => pm.close())
const { SIGTERM, SIGKILL, SIGINT, SIGHUP, SIGUSR1 } = os.constants.signals

test('Process.kill takes a name, with or without SIG', async () => {
  for (const [name, number] of [['SIGTERM', SIGTERM], ['TERM', SIGTERM], ['SIGKILL', SIGKILL], ['INT', SIGINT]]) {
    const p = await pm.exec(['sleep', '30'])
    await p.kill(name)
    assert.deepEqual(await p.waitForExit({ timeout: 5000 }), { code: 128 + number, signal: number, timedOut: false }, name)
  }
})

test('a name reaches the process as that signal (SIGUSR1 is 10 or 30 by platform)', async () => {
  const p = await pm.exec(['sh', '-c', 'trap "echo got-usr1; exit 0" USR1; echo ready; while :; do sleep 0.05; done'])
  await p.waitForLog('ready', { timeout: 5000 })
  await p.kill('SIGUSR1')
  assert.equal((await p.waitForExit({ timeout: 5000 })).code, 0)
  assert.match((await p.output({ encoding: 'utf8' })).stdout, /got-usr1/)
  assert.equal(SIGUSR1, process.platform === 'linux' ? 10 : 30)
})

test('the Mastra-surface handle and manager take names', async () => {
  const h = await pm.spawn('sleep 30')
  assert.equal(await h.kill('SIGTERM'), true)
  const r = await h.wait()
  assert.equal(r.exitCode, 128)
  assert.equal((await h.waitForExit()).signal, SIGTERM)

  // SIGKILL by name is the default kill: the result says killed.
  const k = await pm.spawn('sleep 30')
  assert.equal(await k.kill('KILL'), true)
  assert.equal((await k.wait()).killed, true)

  const m = await pm.spawn('sleep 30')
  assert.equal(await pm.kill(m.pid, 'SIGHUP'), true)
  assert.equal((await m.waitForExit()).signal, SIGHUP)
  assert.equal(await pm.get(m.pid), undefined, 'killed through the manager, it is forgotten')
})

test('a terminal takes names', async () => {
  const t = await pm.createTerminal({ command: ['sleep', '30'] })
  await t.kill('SIGTERM')
  assert.equal((await t.waitForExit({ timeout: 5000 })).signal, SIGTERM)
})

test('an unknown name is InvalidProcessSignalError naming it; nothing is sent', async () => {
  const p = await pm.exec(['sleep', '30'])
  const h = await pm.spawn('sleep 30')
  const t = await pm.createTerminal({ command: ['sleep', '30'] })
  for (const name of ['SIGFOO', 'FOO', 'sigterm', 'SIG', '', 'SIGTERM ', '15']) {
    for (const [what, call] of [
      ['process.kill', () => p.kill(name)],
      ['handle.kill', () => h.kill(name)],
      ['manager.kill', () => pm.kill(h.pid, name)],
      ['terminal.kill', () => t.kill(name)],
    ]) {
      await assert.rejects(call(), (e) => e instanceof InvalidProcessSignalError && e.message.includes(JSON.stringify(name)), `${what}(${JSON.stringify(name)})`)
    }
  }
  assert.ok(alive(p.pid) && alive(Number(h.pid)) && alive(t.pid))
  assert.equal((await p.status()).state, 'running')
  await Promise.all([p.kill('KILL'), h.kill(), t.terminate()])
})
