'use strict'
// The exited processes a ProcessManager keeps for later reads are bounded on both faces: the
// Processes API's list keeps the last 64, the Mastra surface's table (kept until `get` reads an
// exited handle) the newest MAX_EXITED, as a sandbox does. A long-lived app that spawns and
// never reads does not grow without end.
const test = require('node:test')
const assert = require('node:assert/strict')
const os = require('node:os')
const { ProcessManager } = require('..')
const { MAX_EXITED } = require('../lib/process/mastra-rules')

test(`spawn() without get(): the table keeps the newest ${MAX_EXITED} exited handles, running ones always`, async () => {
  const pm = new ProcessManager({ workingDirectory: os.tmpdir() })
  try {
    const running = await pm.spawn('sleep 300')
    const total = MAX_EXITED + 150
    let last
    for (let i = 0; i < total; i += 50) {
      const batch = await Promise.all(Array.from({ length: Math.min(50, total - i) }, () => pm.spawn('true')))
      await Promise.all(batch.map((h) => h.wait()))
      last = batch.at(-1)
    }
    // One more launch after the last exit: the table is pruned on the launch path.
    await (await pm.spawn('true')).wait()
    const listed = await pm.list()
    assert.ok(listed.length <= MAX_EXITED + 64 + 1, `${listed.length} entries`)
    assert.ok(listed.length >= MAX_EXITED, `${listed.length} entries`)
    assert.ok(listed.some((p) => p.pid === running.pid && p.running), 'the running process stays')
    assert.ok(listed.some((p) => p.pid === last.pid), 'the newest exited ones stay')
    assert.equal((await pm.listProcesses()).filter((s) => s.state === 'exited').length, 64)
  } finally {
    await pm.close()
  }
})
