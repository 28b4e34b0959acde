// A persistent sandbox answers as Mastra's LocalSandbox and a local NativeLocalSandbox do: the
// same start outcome, the same wait results, the same list after a read that pruned.
import { after, afterEach, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import * as fs from 'node:fs'
import * as path from 'node:path'
import { LocalSandbox } from '@mastra/core/workspace'
import { tempDir } from './helpers.mjs'
import { freshId, sweep } from './persistent-common.mjs'
import { sandboxMaker } from './backends.mjs'

let tmp
const made = []

/** A sandbox swept after the file, whatever a test left running. */
const make = sandboxMaker(made, () => ({ workingDirectory: path.join(tmp, 'wd') }))

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
  it("start() reports Mastra's outcome for the working directory, and the supervisor's start in a field of its own", async () => {
    const existing = path.join(tmp, 'existing')
    fs.mkdirSync(existing)
    const missing = path.join(tmp, 'missing')
    const mastra = new LocalSandbox({ workingDirectory: existing })
    const expected = (await mastra._start()).outcome
    await mastra._destroy()
    assert.equal(expected, 'connected', "Mastra's LocalSandbox: an existing working directory is found")

    // start() resolves with Mastra's result exactly; how the supervisor was reached is apart.
    const id = freshId()
    const first = make({ id, workingDirectory: existing, persistent: true })
    assert.deepEqual(await first.start(), { outcome: 'connected' })
    assert.equal(first.supervisor, 'started')
    const second = make({ id, workingDirectory: existing, persistent: true })
    assert.deepEqual(await second.start(), { outcome: 'connected' })
    assert.equal(second.supervisor, 'joined')
    assert.deepEqual(await second.start(), { outcome: 'connected' }, 'a start while running')
    assert.equal(second.supervisor, 'joined')
    const fresh = make({ id: freshId(), workingDirectory: missing, persistent: true })
    assert.deepEqual(await fresh.start(), { outcome: 'created' })
    assert.equal(fresh.supervisor, 'started')
    await fresh.detach()
    assert.equal(fresh.supervisor, undefined, 'not attached: no supervisor to speak of')
    const local = make({ workingDirectory: existing })
    assert.deepEqual(await local.start(), { outcome: 'connected' })
    assert.equal(local.supervisor, undefined, 'no supervisor without persistent')
  })

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

  it('list() leaves out a process that get() pruned (read once after its exit)', async () => {
    const local = make({ workingDirectory: path.join(tmp, 'local-pruned') })
    const remote = make({ id: freshId(), workingDirectory: path.join(tmp, 'remote-pruned'), persistent: true })
    for (const sb of [local, remote]) {
      const kept = await sb.processes.spawn('echo kept')
      const read = await sb.processes.spawn('echo read')
      await Promise.all([kept.wait(), read.wait()])
      assert.equal((await sb.processes.get(read.pid)).stdout, 'read\n')
      const listed = (await sb.processes.list()).map((p) => p.pid)
      assert.deepEqual(listed, [kept.pid], sb.persistent ? 'persistent' : 'local')
      assert.equal(await sb.processes.get(read.pid), undefined)
    }
  })

  it('both keep the newest 1000 exited processes for list() and get(), and forget older ones', async () => {
    const local = make({ workingDirectory: path.join(tmp, 'local-many') })
    const remote = make({ id: freshId(), workingDirectory: path.join(tmp, 'remote-many'), persistent: true })
    for (const sb of [local, remote]) {
      const first = await sb.processes.spawn('true', { stdinMode: 'ignore' })
      await first.wait()
      const pids = [first.pid]
      // Then 1000 more, 50 at a time.
      for (let i = 0; i < 20; i++) {
        const batch = await Promise.all(Array.from({ length: 50 }, () => sb.processes.spawn('true', { stdinMode: 'ignore' })))
        await Promise.all(batch.map((h) => h.wait()))
        pids.push(...batch.map((h) => h.pid))
      }
      const listed = (await sb.processes.list()).map((p) => p.pid)
      assert.equal(listed.length, 1000, `${sb.persistent ? 'persistent' : 'local'}: ${listed.length} listed`)
      assert.ok(!listed.includes(pids[0]), 'the oldest is forgotten')
      assert.equal(await sb.processes.get(pids[0]), undefined)
      assert.equal((await sb.processes.get(pids[1000])).exitCode, 0)
    }
  })

  it("a process's nativeHandle is procvisor's whole ProcessHandle on both sides, with the same answers", async () => {
    const local = make({ workingDirectory: path.join(tmp, 'local-native') })
    const remote = make({ id: freshId(), workingDirectory: path.join(tmp, 'remote-native'), persistent: true })
    const seen = []
    for (const sb of [local, remote]) {
      const command = 'echo out; echo err >&2; sleep 0.2; exit 3'
      const handle = await sb.processes.spawn(command)
      const native = handle.nativeHandle
      const before = native.exitCode
      const chunks = []
      for await (const chunk of native.reader) chunks.push(Buffer.from(chunk).toString())
      const waited = await native.wait()
      const logs = []
      for await (const e of await (await sb.processes.get(handle.pid))?.nativeHandle.logs()) logs.push(e.type)
      const typed = await sb.processes.spawn('head -1')
      typed.nativeHandle.writer.write('typed\n')
      const sleeper = await sb.processes.spawn('sleep 30')
      seen.push({
        before,
        id: typeof native.id,
        pid: native.pid === handle.pid,
        command: native.command,
        read: chunks.join(''),
        waited: { ...waited, executionTimeMs: typeof waited.executionTimeMs },
        after: [native.exitCode, native.stdout, native.stderr, native.stdoutTruncated, native.stderrDroppedBytes],
        logs: logs.sort(),
        typed: (await typed.wait()).stdout,
        killed: [await sleeper.nativeHandle.kill(), (await sleeper.wait()).exitCode],
      })
    }
    assert.deepEqual(seen[0], {
      before: undefined,
      id: 'string',
      pid: true,
      command: 'echo out; echo err >&2; sleep 0.2; exit 3',
      read: 'out\n',
      waited: { success: false, exitCode: 3, stdout: 'out\n', stderr: 'err\n', executionTimeMs: 'number' },
      after: [3, 'out\n', 'err\n', false, 0],
      logs: ['stderr', 'stdout', 'terminal'],
      typed: 'typed\n',
      killed: [true, 128],
    })
    assert.deepEqual(seen[1], seen[0])
  })
})
