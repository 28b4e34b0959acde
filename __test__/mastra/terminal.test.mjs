// The `pty` option and `resize` on the Mastra face (NativeProcessManager inside a NativeLocalSandbox),
// on both procvisor backends.
import { it } from 'node:test'
import assert from 'node:assert/strict'
import { ProcessNoTerminalError } from 'procvisor'
import { describeBackends, perTest } from './backends.mjs'

describeBackends('a process on a terminal', ['native', 'persistent'], (backend) => {
  const t = perTest(backend, { prefix: 'procvisor-mastra-terminal-', defaults: () => ({ env: { PATH: process.env.PATH } }) })

  it('a Mastra handle on a terminal reports its size, resizes and takes keys', async () => {
    const sandbox = await t.start()
    let seen = ''
    const h = await sandbox.processes.spawn('[ -t 0 ] && stty size; read x; stty size', {
      pty: { cols: 90, rows: 20 },
      onStdout: (d) => (seen += d),
    })
    await h.nativeHandle.waitForLog(/20 90/)
    await h.resize(100, 30)
    await h.sendStdin('\n')
    const r = await h.wait()
    assert.equal(r.exitCode, 0)
    assert.equal(r.stdout.replace(/\r/g, ''), '20 90\n\n30 100\n')
    assert.equal(r.stderr, '')
    assert.equal(seen, r.stdout)
  })

  it('resize without a terminal is a typed error', async () => {
    const sandbox = await t.start()
    const h = await sandbox.processes.spawn('sleep 100')
    await assert.rejects(h.resize(80, 24), ProcessNoTerminalError)
    await h.kill()
    await h.wait()
  })
})
