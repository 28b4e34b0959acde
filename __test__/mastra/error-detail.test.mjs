// procvisor/mastra: a handle's `nativeHandle` reports a process that died before it was ready
// with the pid the handle shows, the exit code and the end of stderr, on both procvisor backends
// (a persistent sandbox's supervisor sends the error across).
import { it } from 'node:test'
import assert from 'node:assert/strict'
import { ProcessExitedBeforeReadyError, ProcessExitedBeforeLogError } from 'procvisor'
import { describeBackends, perTest } from './backends.mjs'
import { freePort, rejection } from './helpers.mjs'

const CRASH = 'echo "Error: listen EADDRINUSE: address already in use" >&2; exit 3'

describeBackends('a process that dies before it is ready', ['native', 'persistent'], (backend) => {
  const t = perTest(backend, { prefix: 'procvisor-mastra-detail-' })

  it('waitForPort and waitForLog name the handle pid, the exit code and stderr', async () => {
    const sb = await t.start()
    for (const [wait, Class] of [
      [async (h) => h.nativeHandle.waitForPort(await freePort(), { timeout: 10_000 }), ProcessExitedBeforeReadyError],
      [(h) => h.nativeHandle.waitForLog('listening', { timeout: 10_000 }), ProcessExitedBeforeLogError],
    ]) {
      const handle = await sb.processes.spawn(CRASH)
      const err = await rejection(wait(handle))
      assert.ok(err instanceof Class, `${err.name}: ${err.message}`)
      assert.equal(err.pid, Number(handle.pid))
      assert.equal(err.exitCode, 3)
      assert.equal(err.signal, undefined)
      assert.match(err.stderrTail, /EADDRINUSE/)
      assert.match(err.message, new RegExp(`^process ${handle.pid} exited with code 3 before .*EADDRINUSE`))
    }
  })
})
