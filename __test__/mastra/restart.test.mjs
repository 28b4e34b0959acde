// Services on the Mastra face: `sandbox.processes.spawn(cmd, { restart })` on both procvisor
// backends; a persistent sandbox's supervisor goes on restarting with nobody attached and shows a
// later Node process the count and the whole history.
import { after, it } from 'node:test'
import assert from 'node:assert/strict'
import * as fs from 'node:fs'
import * as path from 'node:path'
import { InvalidProcessOptionError } from 'procvisor'
import { alive, eventually } from './helpers.mjs'
import { IMPORT, child as spawnChild, freshId } from './persistent-common.mjs'
import { describeBackends, onlyOn, perTest } from './backends.mjs'

const children = []
after(() => {
  for (const p of children) if (p.exitCode === null && p.signalCode === null) p.kill('SIGKILL')
})

async function collect(stream) {
  const events = []
  for await (const e of stream) events.push(e)
  return events
}

const numbers = (text, word) => [...text.matchAll(new RegExp(`${word} (\\d+)`, 'g'))].map((m) => Number(m[1]))

describeBackends('restart on the Mastra face', ['native', 'persistent'], (backend) => {
  const t = perTest(backend, { prefix: 'procvisor-restart-' })
  const make = t.make

  it('a crash loop: every run reaches the listeners, wait() has the last exit, the count and gaveUp', async () => {
    const sb = make({})
    await sb.start()
    let seen = ''
    const h = await sb.processes.spawn('echo run $$; exit 5', {
      restart: { policy: 'on-failure', maxRestarts: 2, backoffMs: { initial: 20, factor: 2 } },
      onStdout: (t) => (seen += t),
    })
    const result = await h.wait()
    assert.equal(result.exitCode, 5)
    assert.equal(result.restarts, 2)
    assert.equal(result.gaveUp, true)
    assert.equal(numbers(seen, 'run').length, 3)
    assert.equal(numbers(h.stdout, 'run').length, 3)
    // wait() is Mastra's end (the last root exited); the status is 'exited' once its whole
    // group is gone, which the Processes API's waitForExit() waits for.
    await h.nativeHandle.waitForExit()
    const st = await h.nativeHandle.status()
    assert.equal(st.state, 'exited')
    assert.equal(st.restarts, 2)
    assert.equal(st.gaveUp, true)
    const events = await collect(await h.nativeHandle.logs())
    assert.deepEqual(
      events.filter((e) => e.type === 'restart').map((e) => [e.attempt, e.exit.code]),
      [
        [1, 5],
        [2, 5],
      ],
    )
  })

  it("'on-failure' leaves an exit 0 alone; kill() in a backoff ends the service", async () => {
    const sb = make({})
    await sb.start()
    const ok = await sb.processes.spawn('echo fine', { restart: { policy: 'on-failure', backoffMs: { initial: 10 } } })
    const r = await ok.wait()
    assert.equal(r.exitCode, 0)
    assert.equal(r.restarts, 0)
    const h = await sb.processes.spawn('echo run $$; exit 1', { restart: { policy: 'always', backoffMs: { initial: 5000 } } })
    assert.ok(await eventually(async () => (await h.nativeHandle.status()).state === 'backoff'))
    assert.equal(await h.kill(), true)
    const end = await h.wait()
    // The kill ended the service: a killed process's result, as for a kill during a run; the
    // last run's own exit is in the status and the log.
    assert.deepEqual([end.exitCode, end.killed, end.restarts], [128, true, 1])
    assert.equal((await h.nativeHandle.status()).lastExit.code, 1)
    for (const pid of numbers(h.stdout, 'run')) assert.equal(alive(pid), false)
  })

  it("the sandbox's lifetime ending during a backoff ends the service as it ends a command: 124, timedOut", async () => {
    const sb = make({ timeoutMs: 1500 })
    await sb.start()
    const h = await sb.processes.spawn('exit 1', { restart: { policy: 'on-failure', backoffMs: { initial: 60_000 } } })
    const end = await h.wait()
    assert.deepEqual([end.exitCode, end.timedOut, end.killed, end.restarts], [124, true, true, 1])
    assert.match(end.stderr, /the sandbox's lifetime \(timeoutMs\) of 1500 ms ended/)
  })

  it('a bad restart value is an InvalidProcessOptionError naming the field, and nothing runs', async () => {
    const marker = path.join(t.dir, 'ran')
    const sb = make({ timeoutMs: 60_000 })
    await sb.start()
    await assert.rejects(sb.processes.spawn(`touch ${marker}`, { restart: { policy: 'always', backoffMs: { factor: 0 } } }), (e) => {
      assert.ok(e instanceof InvalidProcessOptionError, String(e))
      assert.match(e.message, /restart\.backoffMs\.factor/)
      return true
    })
    assert.equal(fs.existsSync(marker), false)
  })

  it('restarts go on after the starting Node process was SIGKILLed; a new one sees the count and the history', { skip: onlyOn(backend, ['persistent'], 'only a supervisor outlives the Node process that started it') }, async () => {
    const id = freshId()
    const wd = path.join(t.dir, 'wd')
    const first = spawnChild(
      children,
      `${IMPORT}
      const sb = new NativeLocalSandbox({ id: ${JSON.stringify(id)}, workingDirectory: ${JSON.stringify(wd)}, persistent: true, timeoutMs: 60000 })
      await sb.start()
      const h = await sb.processes.spawn('echo run $$; sleep 0.1; exit 3', { restart: { policy: 'on-failure', maxRestarts: 1000, backoffMs: { initial: 20, factor: 1 } } })
      let st
      do { await new Promise((r) => setTimeout(r, 20)); st = await h.nativeHandle.status() } while (st.restarts < 2)
      console.log(JSON.stringify({ pid: h.pid, restarts: st.restarts, supervisor: sb.supervisorPid }))
      setInterval(() => {}, 1000)`,
    )
    const a = await first.first
    first.proc.kill('SIGKILL')
    await first.exited
    assert.ok(alive(a.supervisor), 'the supervisor outlived the Node process')
    await new Promise((r) => setTimeout(r, 500))

    const sb = make({ id, timeoutMs: 60_000 })
    assert.equal((await sb.start()).outcome, 'connected')
    const h = await sb.processes.get(a.pid)
    assert.ok(h, 'found again by its pid')
    const st = await h.nativeHandle.status()
    assert.ok(st.restarts >= a.restarts + 2, `restarted with nobody attached: ${a.restarts} then ${st.restarts}`)
    assert.notEqual(st.pid, Number(a.pid), 'another run than the first')
    assert.deepEqual(st.lastExit, { code: 3, timedOut: false })
    // The whole history, in order: run, restart 1, run, restart 2, ...
    const events = (await collect(await h.nativeHandle.logs())).filter((e) => e.type !== 'stdout' || Buffer.from(e.data).length > 0)
    const attempts = events.filter((e) => e.type === 'restart').map((e) => e.attempt)
    assert.deepEqual(
      attempts.slice(0, st.restarts),
      Array.from({ length: st.restarts }, (_, i) => i + 1),
    )
    assert.equal(events[0].type, 'stdout')
    assert.match(Buffer.from(events[0].data).toString(), new RegExp(`run ${a.pid}`))
    for (let i = 0; i < events.length - 1; i++) {
      if (events[i].type === 'restart') assert.equal(events[i + 1].type, 'stdout', 'each restart is followed by the next run')
    }
    // The retained text has every run, too.
    assert.ok(numbers(h.stdout, 'run').length >= st.restarts)

    assert.equal(await h.kill(), true)
    const end = await h.wait()
    assert.ok(end.restarts >= st.restarts)
    assert.equal(end.gaveUp, false)
    await new Promise((r) => setTimeout(r, 100))
    assert.equal((await h.nativeHandle.status()).restarts, end.restarts, 'no restart after the kill')
    const pids = numbers(h.stdout, 'run')
    assert.equal(await eventually(() => pids.every((pid) => !alive(pid)), 5000), true, 'no run is left')
    await sb._stop()
    assert.equal(await eventually(() => !alive(a.supervisor), 5000), true)
  })
})
