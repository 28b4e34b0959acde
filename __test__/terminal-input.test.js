'use strict'
// Input to a process on a terminal whose program reads nothing and is then killed: the pending
// write settles with a typed error, nothing spins, and Node exits by itself.
const test = require('node:test')
const assert = require('node:assert/strict')
const { spawnSync } = require('node:child_process')
const path = require('node:path')

const ROOT = path.join(__dirname, '..')

const SCRIPT = `
const { ProcessManager } = require(${JSON.stringify(ROOT)})
;(async () => {
  const pm = new ProcessManager({ workingDirectory: require('node:os').tmpdir() })
  const results = []
  // Raw mode without echo: the terminal's queue fills and nothing ever drains it.
  for (const command of ['stty raw -echo; sleep 1000', 'sleep 1000', 'stty raw -echo; sleep 1000 & sleep 1000']) {
    const h = await pm.spawn(command, { pty: true })
    await new Promise((r) => setTimeout(r, 150))
    const pending = h.sendStdin(Buffer.alloc(10 << 20, 0x61)).then(() => 'resolved', (e) => e.code)
    await new Promise((r) => setTimeout(r, 200))
    await h.kill()
    results.push({ command, settled: await pending })
    // Once the exit is known, a later write is refused at once.
    await h.wait()
    results.at(-1).later = await h.sendStdin('x').then(() => 'resolved', (e) => e.code)
  }
  await pm.close()
  console.log(JSON.stringify(results))
})()
`

test('a write pending on a killed terminal settles with a typed error, and Node exits', () => {
  const r = spawnSync(process.execPath, ['-e', SCRIPT], { encoding: 'utf8', timeout: 30_000 })
  assert.equal(r.signal, null, `Node exited by itself (stderr: ${r.stderr})`)
  assert.equal(r.status, 0, r.stderr)
  const results = JSON.parse(r.stdout.trim().split('\n').at(-1))
  assert.equal(results.length, 3)
  for (const { command, settled, later } of results) {
    assert.equal(settled, 'PROCESS_STDIN_WRITE_FAILED', command)
    assert.equal(later, 'PROCESS_ALREADY_EXITED', command)
  }
})
