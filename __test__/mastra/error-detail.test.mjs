// procvisor/mastra: a handle's `nativeHandle` reports a process that died before it was ready
// with the pid the handle shows, the exit code and the end of stderr, in a local sandbox and in
// a persistent one (whose supervisor sends the error across).
import { after, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import * as fs from 'node:fs'
import * as path from 'node:path'
import { NativeLocalSandbox } from 'procvisor/mastra'
import { ProcessExitedBeforeReadyError, ProcessExitedBeforeLogError } from 'procvisor'
import { freePort, rejection, tempDir } from './helpers.mjs'

const tmp = tempDir('procvisor-mastra-detail-')
const made = []
after(async () => {
  for (const sb of made) await sb.destroy().catch(() => {})
  fs.rmSync(tmp, { recursive: true, force: true })
})

const CRASH = 'echo "Error: listen EADDRINUSE: address already in use" >&2; exit 3'

for (const persistent of [false, true]) {
  describe(persistent ? 'a persistent sandbox' : 'a local sandbox', () => {
    it('waitForPort and waitForLog name the handle pid, the exit code and stderr', async () => {
      const sb = new NativeLocalSandbox({ id: `detail-${randomBytes(6).toString('hex')}`, workingDirectory: path.join(tmp, String(persistent)), persistent })
      made.push(sb)
      await sb.start()
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
}
