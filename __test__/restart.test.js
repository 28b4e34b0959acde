'use strict'
// Services: `restart` on `exec()` and `spawn()` of procvisor's ProcessManager, against real
// processes: restarts with backoff, the count and history every handle sees, and the ends for
// good (kill, timeout, close, a crash loop that gives up).
const test = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const net = require('node:net')
const path = require('node:path')
const { ProcessManager, InvalidProcessOptionError } = require('..')
const { tempDir, alive, eventually } = require('./helpers')

const tmp = tempDir('procvisor-restart-')
const pm = new ProcessManager({ workingDirectory: tmp })
test.after(() => pm.close())
const SERVER = path.join(__dirname, 'fixtures', 'crashing-server.js')
const fast = (more = {}) => ({ policy: 'on-failure', backoffMs: { initial: 20, factor: 2 }, ...more })

function freePort() {
  return new Promise((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address()
      s.close(() => resolve(port))
    })
  })
}

async function collect(stream) {
  const events = []
  for await (const e of stream) events.push(e)
  return events
}

const stdoutOf = (events) => Buffer.concat(events.filter((e) => e.type === 'stdout').map((e) => Buffer.from(e.data))).toString()
const numbers = (text, word) => [...text.matchAll(new RegExp(`${word} (\\d+)`, 'g'))].map((m) => Number(m[1]))

async function get(port) {
  const res = await fetch(`http://127.0.0.1:${port}/`)
  return res.text()
}

test('a server that exits 1 after its third request is restarted and serves again on its port', async () => {
  const port = await freePort()
  const p = await pm.exec([process.execPath, SERVER, String(port), '3'], { restart: fast() })
  await p.waitForPort(port, { timeout: 10_000, interval: 20 })
  const first = await p.status()
  assert.equal(first.state, 'running')
  assert.equal(first.restarts, 0)
  for (let i = 1; i <= 3; i++) assert.match(await get(port), new RegExp(`pid ${first.pid} request ${i}`))
  const again = await eventually(async () => {
    const st = await p.status()
    return st.restarts === 1 && st.state === 'running' ? st : null
  })
  assert.ok(again, 'restarted once')
  assert.notEqual(again.pid, first.pid)
  assert.equal(p.pid, again.pid, 'the handle names the current run')
  assert.deepEqual(again.lastExit, { code: 1, timedOut: false })
  await p.waitForPort(port, { timeout: 10_000, interval: 20 })
  assert.match(await get(port), new RegExp(`pid ${again.pid} request 1`))
  const events = await collect(await p.logs())
  const restart = events.find((e) => e.type === 'restart')
  assert.equal(restart.attempt, 1)
  assert.deepEqual(restart.exit, { code: 1, timedOut: false })
  assert.match(restart.cursor, /./)
  assert.ok(!Number.isNaN(Date.parse(restart.timestamp)))
  // Both runs' output, in order, on either side of the restart.
  const at = events.indexOf(restart)
  assert.match(stdoutOf(events.slice(0, at)), new RegExp(`as ${first.pid}`))
  assert.match(stdoutOf(events.slice(at)), new RegExp(`as ${again.pid}`))
  assert.equal(await p.kill(), undefined)
  const exit = await p.waitForExit({ timeout: 10_000 })
  assert.equal(exit.restarts, 1)
  assert.equal(exit.gaveUp, false)
})

test('a program that always fails is restarted maxRestarts times, with growing gaps, then gives up', async () => {
  const backoffMs = { initial: 30, factor: 2, max: 1000 }
  const p = await pm.exec(['sh', '-c', 'echo run $$; exit 7'], { restart: { policy: 'on-failure', maxRestarts: 3, backoffMs } })
  const exit = await p.waitForExit({ timeout: 10_000 })
  assert.deepEqual(exit, { code: 7, timedOut: false, restarts: 3, gaveUp: true })
  const st = await p.status()
  assert.equal(st.state, 'exited')
  assert.equal(st.restarts, 3)
  assert.equal(st.gaveUp, true)
  assert.deepEqual(st.exit, { code: 7, timedOut: false })
  const events = await collect(await p.logs())
  assert.deepEqual(
    events.map((e) => e.type),
    ['stdout', 'restart', 'stdout', 'restart', 'stdout', 'restart', 'stdout', 'terminal'],
  )
  assert.deepEqual(
    events.filter((e) => e.type === 'restart').map((e) => e.attempt),
    [1, 2, 3],
  )
  // Gap n runs from the restart event to the next run's first output.
  const gaps = []
  for (let i = 0; i < events.length; i++) {
    if (events[i].type === 'restart') gaps.push(Date.parse(events[i + 1].timestamp) - Date.parse(events[i].timestamp))
  }
  const configured = [30, 60, 120]
  gaps.forEach((g, i) => assert.ok(g >= configured[i], `gap ${i + 1} was ${g} ms, configured ${configured[i]} ms`))
  assert.equal(new Set(numbers(stdoutOf(events), 'run')).size, 4, 'four runs, four pids')
})

test("'on-failure' does not restart after exit 0; 'always' does", async () => {
  const once = await pm.exec(['sh', '-c', 'echo ok'], { restart: fast() })
  assert.deepEqual(await once.waitForExit({ timeout: 5000 }), { code: 0, timedOut: false, restarts: 0, gaveUp: false })
  const always = await pm.exec(['sh', '-c', 'echo ok'], { restart: fast({ policy: 'always', maxRestarts: 2 }) })
  assert.deepEqual(await always.waitForExit({ timeout: 5000 }), { code: 0, timedOut: false, restarts: 2, gaveUp: true })
  const out = await always.output({ encoding: 'utf8' })
  assert.equal(out.stdout, 'ok\nok\nok\n')
})

/** A run that prints its own pid and that of a child it leaves running, then fails. */
const FAILING = 'sleep 30 & echo child $!; echo run $$; sleep 0.05; exit 1'

async function pidsOf(p) {
  const text = stdoutOf(await collect(await p.logs()))
  return [...numbers(text, 'run'), ...numbers(text, 'child')]
}

test('kill() during a backoff ends the service for good, and nothing of any run is left', async () => {
  const p = await pm.exec(['sh', '-c', FAILING], { restart: { policy: 'on-failure', backoffMs: { initial: 5000 } } })
  assert.ok(await eventually(async () => (await p.status()).state === 'backoff'))
  const t0 = Date.now()
  await p.kill()
  const exit = await p.waitForExit({ timeout: 5000 })
  assert.ok(Date.now() - t0 < 4000, 'ended without waiting out the backoff')
  // The kill's signal ended the service; the last run's own exit stays in lastExit.
  assert.deepEqual([exit.code, exit.signal, exit.restarts], [143, 15, 1])
  const st = await p.status()
  assert.equal(st.state, 'exited')
  assert.equal(st.gaveUp, false)
  assert.equal(st.lastExit.code, 1)
  const pids = await pidsOf(p)
  assert.equal(pids.length, 2)
  for (const pid of pids) assert.equal(alive(pid), false, `pid ${pid} is gone`)
})

test('kill() during a run ends the service for good, and nothing of any run is left', async () => {
  const p = await pm.exec(['sh', '-c', 'sleep 30 & echo child $!; echo run $$; if [ -e again ]; then wait; fi; touch again; exit 1'], {
    cwd: fs.mkdtempSync(path.join(tmp, 'run-')),
    restart: fast(),
  })
  assert.ok(await eventually(async () => (await p.status()).restarts === 1 && (await pidsOf(p)).length === 4))
  await p.kill('SIGKILL')
  const exit = await p.waitForExit({ timeout: 5000 })
  assert.equal(exit.signal, 9)
  assert.equal(exit.restarts, 1)
  await new Promise((r) => setTimeout(r, 100))
  assert.equal((await p.status()).restarts, 1, 'no restart after the kill')
  for (const pid of await pidsOf(p)) assert.equal(alive(pid), false, `pid ${pid} is gone`)
})

// Each containment: a cgroup reaches the whole tree; a process group, the members that stayed in it.
for (const containment of ['process-group', 'cgroup']) {
  let manager
  let skip = false
  try {
    manager = new ProcessManager({ workingDirectory: tmp, containment })
    test.after(() => manager.close())
  } catch (e) {
    skip = `no ${containment} containment here: ${e.message}`
  }
  test(`a server whose child holds the port is restarted without EADDRINUSE (${containment})`, { skip }, async () => {
    const port = await freePort()
    const p = await manager.exec([process.execPath, SERVER, String(port), '1', 'child'], { restart: fast({ maxRestarts: 1 }) })
    await p.waitForPort(port, { timeout: 10_000, interval: 20 })
    const first = await p.status()
    assert.match(await get(port), new RegExp(`pid ${first.pid} request 1`))
    assert.ok(await eventually(async () => (await p.status()).restarts === 1))
    await p.waitForPort(port, { timeout: 10_000, interval: 20 })
    const second = await p.status()
    assert.match(await get(port), new RegExp(`pid ${second.pid} request 1`))
    const exit = await p.waitForExit({ timeout: 10_000 })
    assert.deepEqual(exit, { code: 1, timedOut: false, restarts: 1, gaveUp: true })
    const out = await p.output({ encoding: 'utf8' })
    assert.doesNotMatch(out.stderr, /EADDRINUSE/)
    const children = numbers(out.stdout, 'child')
    assert.equal(children.length, 2)
    for (const pid of children) assert.equal(alive(pid), false, `child ${pid} is gone`)
  })
}

test('a timeout bounds the whole service and ends it for good', async () => {
  const p = await pm.exec(['sh', '-c', 'sleep 0.03; exit 1'], { timeout: 400, restart: fast({ maxRestarts: 1000, backoffMs: { initial: 10, factor: 1 } }) })
  const exit = await p.waitForExit({ timeout: 5000 })
  assert.equal(exit.timedOut, true)
  assert.ok(exit.restarts > 0)
  const restarts = exit.restarts
  await new Promise((r) => setTimeout(r, 100))
  assert.equal((await p.status()).restarts, restarts)
})

test('close() ends a service waiting for its next run', async () => {
  const own = new ProcessManager({ workingDirectory: tmp })
  const p = await own.exec(['sh', '-c', FAILING], { restart: { policy: 'always', backoffMs: { initial: 5000 } } })
  assert.ok(await eventually(async () => (await p.status()).state === 'backoff'))
  const pids = await pidsOf(p)
  await own.close()
  for (const pid of pids) assert.equal(alive(pid), false)
})

test('spawn() (the Mastra-shaped surface): listeners see every run, wait() has the last exit and the count', async () => {
  const seen = []
  const h = await pm.spawn('echo out $$; echo err >&2; exit 3', {
    restart: { policy: 'on-failure', maxRestarts: 2, backoffMs: { initial: 10 } },
    onStdout: (t) => seen.push(t),
  })
  const pid = h.pid
  const result = await h.wait()
  assert.equal(result.exitCode, 3)
  assert.equal(result.restarts, 2)
  assert.equal(result.gaveUp, true)
  assert.equal(numbers(seen.join(''), 'out').length, 3)
  assert.equal(numbers(h.stdout, 'out').length, 3)
  assert.equal(h.stderr, 'err\nerr\nerr\n')
  assert.equal(h.pid, pid, 'the handle keeps its pid, Mastra key')
  const st = await h.status()
  assert.equal(st.restarts, 2)
  assert.equal(st.gaveUp, true)
  assert.equal(await h.kill(), false, 'a service that ended is not killed again')
})

test('spawn(): kill() in a backoff ends the service, wait() resolves', async () => {
  const h = await pm.spawn('exit 4', { restart: { policy: 'always', backoffMs: { initial: 5000 } } })
  assert.ok(await eventually(async () => (await h.status()).state === 'backoff'))
  assert.equal(await pm.kill(h.pid), true)
  const r = await h.wait()
  // Killed, as a kill during a run reports; the run's own exit 4 is the status's lastExit.
  assert.deepEqual([r.exitCode, r.killed, r.restarts, r.gaveUp], [128, true, 1, false])
  assert.equal((await h.status()).lastExit.code, 4)
})

test('bad restart values are an InvalidProcessOptionError naming the field, before anything runs', async () => {
  const cases = [
    [5, 'restart'],
    ['always', 'restart'],
    [{ policy: 'sometimes' }, 'restart.policy'],
    [{}, 'restart.policy'],
    [{ policy: 'always', maxRestarts: -1 }, 'restart.maxRestarts'],
    [{ policy: 'always', maxRestarts: 1.5 }, 'restart.maxRestarts'],
    [{ policy: 'always', backoffMs: { factor: 0.5 } }, 'restart.backoffMs.factor'],
    [{ policy: 'always', backoffMs: { initial: -1 } }, 'restart.backoffMs.initial'],
    [{ policy: 'always', backoffMs: 100 }, 'restart.backoffMs'],
    [{ policy: 'always', resetAfterMs: NaN }, 'restart.resetAfterMs'],
  ]
  const marker = path.join(tmp, 'ran')
  for (const [restart, field] of cases) {
    for (const start of [() => pm.exec(['touch', marker], { restart }), () => pm.spawn(`touch ${marker}`, { restart })]) {
      await assert.rejects(start(), (e) => {
        assert.ok(e instanceof InvalidProcessOptionError, `${JSON.stringify(restart)}: ${e}`)
        assert.equal(e.code, 'INVALID_PROCESS_OPTION')
        assert.ok(e.message.includes(field), `${e.message} names ${field}`)
        return true
      })
    }
  }
  assert.equal(fs.existsSync(marker), false, 'nothing ran')
})
