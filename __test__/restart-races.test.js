'use strict'
// A service killed at any moment of its life, above all while its next run is being launched:
// every run's root is reaped (no zombie is left behind, before or after close()), and the kill
// ends the service for good.
const test = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const { ProcessManager } = require('..')
const { tempDir } = require('./helpers')

const tmp = tempDir('procvisor-restart-races-')

/** This process's children that have exited and that nobody has reaped. */
function zombieChildren() {
  const out = []
  for (const d of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue
    try {
      const stat = fs.readFileSync(`/proc/${d}/stat`, 'utf8')
      const [state, ppid] = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
      if (Number(ppid) === process.pid && state === 'Z') out.push(Number(d))
    } catch {}
  }
  return out
}

const settle = (ms) => new Promise((r) => setTimeout(r, ms))

test('a service killed while it relaunches leaves no zombie, before or after close()', async () => {
  const pm = new ProcessManager({ workingDirectory: tmp })
  const ends = []
  try {
    // No backoff: the service spends most of its life launching its next run, so kills land
    // between a run's end, its relaunch and the new run's first look.
    for (let i = 0; i < 60; i++) {
      const p = await pm.exec(['sh', '-c', 'exit 1'], { restart: { policy: 'always', backoffMs: { initial: 0 }, maxRestarts: 1_000_000 } })
      await settle(i % 7)
      await p.kill('SIGKILL')
      const exit = await p.waitForExit({ timeout: 10_000 })
      ends.push(exit)
      const before = (await p.status()).restarts
      await settle(5)
      assert.equal((await p.status()).restarts, before, 'no run follows the kill')
    }
    await settle(200)
    assert.deepEqual(zombieChildren(), [], 'every run of every killed service was reaped')
  } finally {
    await pm.close()
  }
  await settle(200)
  assert.deepEqual(zombieChildren(), [], 'none after close() either')
  assert.equal(ends.length, 60)
  for (const exit of ends) assert.equal(exit.timedOut, false)
})
