// A command cut off by the end of the sandbox's lifetime (`timeoutMs` of the sandbox) reports
// like a command cut off by its own `timeout` does in Mastra: exit code 124, `timedOut` and
// `killed`, and a note on stderr, which here says it was the sandbox's lifetime. A process that
// ended before, by itself or by a kill, keeps its own result. On both procvisor backends.
import { it } from 'node:test'
import assert from 'node:assert/strict'
import { eventually } from './helpers.mjs'
import { describeBackends, perTest } from './backends.mjs'

const note = (ms) => `\nProcess killed: the sandbox's lifetime (timeoutMs) of ${ms} ms ended`

describeBackends('the end of a sandbox’s lifetime, as a command sees it', ['native', 'persistent'], { timeout: 30000 }, (backend) => {
  const make = perTest(backend, { prefix: 'procvisor-lifetime-end-' }).make

  it('reports like a per-command timeout: 124, timedOut, killed, a note on stderr that says why', async () => {
    const sb = make({ timeoutMs: 1500 })
    await sb.start()
    // Mastra's own per-command timeout, for the shape to match.
    const own = await sb.executeCommand('sh', ['-c', 'echo out; echo err >&2; sleep 30'], { timeout: 200 })
    assert.deepEqual(
      { exitCode: own.exitCode, success: own.success, killed: own.killed, timedOut: own.timedOut, stderr: own.stderr },
      { exitCode: 124, success: false, killed: true, timedOut: true, stderr: 'err\n\nProcess timed out after 200ms' },
    )

    const stderrSeen = []
    const spawned = await sb.processes.spawn('echo err >&2; sleep 30', { onStderr: (d) => stderrSeen.push(d) })
    const result = await sb.executeCommand('sh', ['-c', 'echo out; echo err >&2; sleep 30'])
    assert.deepEqual(
      { exitCode: result.exitCode, success: result.success, killed: result.killed, timedOut: result.timedOut, stdout: result.stdout, stderr: result.stderr },
      { exitCode: 124, success: false, killed: true, timedOut: true, stdout: 'out\n', stderr: `err\n${note(1500)}` },
    )
    const r = await spawned.wait()
    assert.equal(r.exitCode, 124)
    assert.equal(spawned.exitCode, 124)
    assert.equal(r.timedOut, true)
    assert.equal(r.killed, true)
    assert.equal(r.stderr, `err\n${note(1500)}`)
    assert.equal(stderrSeen.join(''), `err\n${note(1500)}`, 'the stderr listener got the note too')
    assert.ok(await eventually(() => sb.status === 'stopped'), `status is ${sb.status}`)
  })

  it('a process that ended before the lifetime keeps its own result', async () => {
    const sb = make({ timeoutMs: 2000 })
    await sb.start()
    const done = await sb.processes.spawn('echo done')
    await done.wait()
    const killed = await sb.processes.spawn('sleep 30')
    await killed.kill()
    const killedResult = await killed.wait()
    const running = await sb.processes.spawn('sleep 30')
    assert.ok(await eventually(() => sb.status === 'stopped', 10000), `status is ${sb.status}`)
    assert.deepEqual(
      [await done.wait(), killedResult].map((x) => [x.exitCode, x.killed, x.timedOut, x.stderr]),
      [
        [0, false, false, ''],
        [128, true, false, ''],
      ],
    )
    const cut = await running.wait()
    assert.deepEqual([cut.exitCode, cut.killed, cut.timedOut, cut.stderr], [124, true, true, note(2000)])
  })

  it('a stop() before the lifetime ends is a plain kill', async () => {
    const sb = make({ timeoutMs: 60000 })
    await sb.start()
    const h = await sb.processes.spawn('sleep 30')
    await sb.stop()
    const r = await h.wait()
    assert.deepEqual([r.exitCode, r.killed, r.timedOut, r.stderr], [128, true, false, ''])
  })
})
