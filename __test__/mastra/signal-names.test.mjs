// procvisor/mastra: signals by name on a handle (`kill(signal)`), on the sandbox's process
// manager (`processes.kill(pid, signal)`) and on a handle's `nativeHandle`, on both procvisor
// backends.
import { it } from 'node:test'
import assert from 'node:assert/strict'
import * as os from 'node:os'
import { InvalidProcessSignalError } from 'procvisor'
import { describeBackends, perTest } from './backends.mjs'
import { alive } from './helpers.mjs'

const { SIGTERM } = os.constants.signals

describeBackends('signal names', ['native', 'persistent'], (backend) => {
  const t = perTest(backend, { prefix: 'procvisor-mastra-signames-' })

  it('kill takes names; an unknown name is refused and nothing is sent', async () => {
    const sb = await t.start()

    const a = await sb.processes.spawn('sleep 30')
    assert.equal(await a.kill('SIGTERM'), true)
    assert.equal((await a.wait()).exitCode, 128)
    assert.equal((await a.nativeHandle.waitForExit()).signal, SIGTERM)

    // Killed through the manager, the process is released: its own exit code says HUP reached it.
    const b = await sb.processes.spawn('trap "exit 7" HUP; echo ready; while :; do sleep 0.05; done')
    await b.nativeHandle.waitForLog('ready', { timeout: 5000 })
    assert.equal(await sb.processes.kill(b.pid, 'HUP'), true)
    assert.equal((await b.wait()).exitCode, 7)

    const c = await sb.processes.spawn('sleep 30')
    await c.nativeHandle.kill('TERM')
    assert.equal((await c.nativeHandle.waitForExit()).signal, SIGTERM)

    const d = await sb.processes.spawn('sleep 30')
    for (const call of [() => d.kill('SIGFOO'), () => sb.processes.kill(d.pid, 'SIGFOO'), () => d.nativeHandle.kill('SIGFOO')]) {
      await assert.rejects(call(), (e) => e instanceof InvalidProcessSignalError && e.message.includes('"SIGFOO"'))
    }
    assert.ok(alive(Number(d.pid)))
    assert.equal(await d.kill('SIGKILL'), true)
    assert.equal((await d.wait()).killed, true)
  })
})
