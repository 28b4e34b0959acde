// A persistent sandbox answers as Mastra's LocalSandbox and a local NativeLocalSandbox do: the
// same start outcome, the same wait results, the same list after a read that pruned.
import { after, afterEach, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import * as fs from 'node:fs'
import * as path from 'node:path'
import { NativeLocalSandbox } from 'procvisor/mastra'
import { tempDir } from './helpers.mjs'
import { freshId, sweep } from './persistent-common.mjs'

let tmp
const made = []

/** A sandbox swept after the file, whatever a test left running. */
function make(options) {
  const sb = new NativeLocalSandbox({ workingDirectory: path.join(tmp, 'wd'), ...options })
  made.push(sb)
  return sb
}

before(() => {
  tmp = tempDir('procvisor-persistent-fidelity-')
})
afterEach(async () => {
  for (const sb of made.splice(0)) {
    await sb._destroy().catch(() => {})
    if (sb.persistent) await sweep(sb.id)
  }
})
after(() => fs.rmSync(tmp, { recursive: true, force: true }))

describe('a persistent sandbox gives the results a local one gives', { timeout: 30000 }, () => {
  it('wait() and executeCommand() results carry killed and timedOut, false when neither happened', async () => {
    const local = make({ workingDirectory: path.join(tmp, 'local') })
    const remote = make({ id: freshId(), workingDirectory: path.join(tmp, 'remote'), persistent: true })
    const results = []
    for (const sb of [local, remote]) {
      const waited = await (await sb.processes.spawn('echo hi')).wait()
      const executed = await sb.executeCommand('echo', ['hi'])
      results.push([waited, executed].map(({ executionTimeMs, ...rest }) => rest))
    }
    assert.equal(results[0][0].killed, false)
    assert.equal(results[0][0].timedOut, false)
    assert.deepEqual(results[1], results[0])
  })
})
