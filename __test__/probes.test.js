'use strict'
// Probes (`readiness`, `liveness`) on `exec()` and `spawn()`, against real processes and real
// HTTP servers: each kind of probe flips `ready`, a failing health check restarts a service, a
// process that never listens is left running and not ready, and bad options are refused first.
const test = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const { ProcessManager, InvalidProcessOptionError } = require('..')
const { tempDir, eventually, freePort, markedPids } = require('./helpers')

const tmp = tempDir('procvisor-probes-')
const pm = new ProcessManager({ workingDirectory: tmp })
test.after(() => pm.close())
const SERVER = path.join(__dirname, 'fixtures', 'health-server.js')
const fast = { periodMs: 50, timeoutMs: 2000 }

async function collect(stream) {
  const events = []
  for await (const e of stream) events.push(e)
  return events
}

/** The log's events as short words: p:<probe>:<ok>, r<attempt>, end. */
async function shape(p) {
  const words = []
  for (const e of await collect(await p.logs())) {
    if (e.type === 'probe') words.push(`${e.probe}:${e.ok}`)
    else if (e.type === 'restart') words.push(`r${e.attempt}`)
    else if (e.type === 'terminal') words.push('end')
  }
  return words
}

test('a server whose /health starts failing is ended by its liveness probe and restarted by its policy', async () => {
  const port = await freePort()
  const p = await pm.exec([process.execPath, SERVER, String(port), '-', '3'], {
    readiness: { port, ...fast },
    liveness: { http: { port, path: '/health' }, failureThreshold: 2, ...fast },
    restart: { policy: 'on-failure', maxRestarts: 1, backoffMs: { initial: 20 } },
  })
  const exit = await p.waitForExit({ timeout: 30_000 })
  // Each run answers three health checks, fails two, and is ended by SIGTERM; the second run's
  // end is one restart past maxRestarts.
  assert.deepEqual(exit, { code: 143, signal: 15, timedOut: false, restarts: 1, gaveUp: true })
  assert.deepEqual(await shape(p), ['readiness:true', 'liveness:false', 'r1', 'readiness:true', 'liveness:false', 'end'])
  const failure = (await collect(await p.logs())).find((e) => e.type === 'probe' && !e.ok)
  assert.equal(failure.probe, 'liveness')
  assert.match(failure.reason, /2 failures in a row; GET http:\/\/localhost:\d+\/health: HTTP status 500/)
  assert.equal(typeof failure.cursor, 'string')
  assert.ok(!Number.isNaN(Date.parse(failure.timestamp)))
  const st = await p.status()
  assert.equal(st.ready, false, 'an ended process is not ready')
  assert.equal(st.healthy, false)
})

/** Launches the gated server with `readiness`, checks it is not ready, opens the gate, waits for ready. */
async function readyOnceOpen(readiness, launch = (argv, o) => pm.exec(argv, o)) {
  const port = await freePort()
  const gate = path.join(tmp, `gate-${port}`)
  const p = await launch([process.execPath, SERVER, String(port), gate], { readiness: readiness(port) })
  const before = await p.status()
  assert.equal(before.ready, false, 'not ready before the probe passed')
  assert.equal('healthy' in before, false, 'no liveness probe, no verdict')
  fs.writeFileSync(gate, '')
  const ready = await eventually(async () => (await p.status()).ready, 15_000)
  assert.equal(ready, true)
  const events = (await collect(await p.logs())).filter((e) => e.type === 'probe')
  assert.deepEqual(events.map((e) => [e.probe, e.ok]), [['readiness', true]])
  assert.equal((await p.status()).state, 'running')
  return { p, port, reason: events[0].reason }
}

test('readiness by port, http, log and exec each flips ready', async () => {
  const byPort = await readyOnceOpen((port) => ({ port, ...fast }))
  assert.match(byPort.reason, /accepted a connection/)
  const byHttp = await readyOnceOpen((port) => ({ http: { port, path: '/health', status: 200 }, ...fast }))
  assert.match(byHttp.reason, /GET http:\/\/localhost:\d+\/health answered/)
  const byLog = await readyOnceOpen(() => ({ log: '/^listening on \\d+/m', ...fast }))
  assert.match(byLog.reason, /the output matched/)
  const connect = (port) => `require('node:net').connect(${port}, '127.0.0.1').on('connect', () => process.exit(0)).on('error', () => process.exit(1))`
  const byExec = await readyOnceOpen((port) => ({ exec: [process.execPath, '-e', connect(port)], periodMs: 100 }))
  assert.match(byExec.reason, /exited 0/)
  for (const { p } of [byPort, byHttp, byLog, byExec]) await p.kill('SIGKILL')
})

test('spawn() takes the same probes: a shell command becomes ready by its output', async () => {
  const { p } = await readyOnceOpen(() => ({ log: 'listening on', ...fast }), (argv, o) => pm.spawn(argv.map((a) => `'${a}'`).join(' '), o))
  assert.equal(await p.kill(), true)
})

test('a process that never listens stays running and not ready', async () => {
  const port = await freePort()
  const count = path.join(tmp, 'checks')
  const p = await pm.exec([process.execPath, '-e', 'setInterval(() => {}, 1000)'], {
    readiness: { port, periodMs: 20, failureThreshold: 1 },
  })
  // A second process probed the same way by a command that counts its checks: many periods pass.
  const q = await pm.exec([process.execPath, '-e', 'setInterval(() => {}, 1000)'], {
    readiness: { exec: ['/bin/sh', '-c', `echo x >> ${count}; exit 1`], periodMs: 20 },
  })
  await eventually(() => fs.existsSync(count) && fs.readFileSync(count, 'utf8').length >= 20, 15_000)
  for (const proc of [p, q]) {
    const st = await proc.status()
    assert.equal(st.state, 'running')
    assert.equal(st.ready, false)
    assert.deepEqual((await collect(await proc.logs())).filter((e) => e.type === 'probe'), [])
    await proc.kill('SIGKILL')
  }
})

test('bad probe and shutdown options are refused before anything runs', async () => {
  const marker = `probes-bad-${process.pid}`
  const bad = [
    [{ readiness: {} }, 'readiness'],
    [{ readiness: { periodMs: 100 } }, 'readiness'],
    [{ readiness: { port: 3000, log: 'x' } }, 'readiness'],
    [{ readiness: { port: 3000, every: 5 } }, 'readiness.every'],
    [{ readiness: { port: 0 } }, 'readiness.port'],
    [{ liveness: { port: 65536 } }, 'liveness.port'],
    [{ readiness: { http: { path: '/health' } } }, 'readiness.http.port'],
    [{ readiness: { http: { port: 80, path: 'health' } } }, 'readiness.http.path'],
    [{ readiness: { port: 80, periodMs: -1 } }, 'readiness.periodMs'],
    [{ liveness: { port: 80, failureThreshold: 0 } }, 'liveness.failureThreshold'],
    [{ readiness: { log: '/(a)\\1/' } }, 'readiness.log'],
    [{ readiness: { log: /ready/ } }, 'readiness.log'],
    [{ liveness: { exec: [] } }, 'liveness.exec'],
    [{ readiness: 'port 80' }, 'readiness'],
    [{ shutdown: { signal: 'SIGNOPE' } }, 'shutdown.signal'],
    [{ shutdown: { timeoutMs: -1 } }, 'shutdown.timeoutMs'],
    [{ shutdown: { grace: 100 } }, 'shutdown.grace'],
  ]
  for (const [options, field] of bad) {
    for (const launch of [() => pm.exec(['/bin/sh', '-c', 'sleep 30'], { env: { PROCVISOR_MARKER: marker }, ...options }), () => pm.spawn('sleep 30', { env: { PROCVISOR_MARKER: marker }, ...options })]) {
      const e = await launch().then(
        () => assert.fail(`accepted ${JSON.stringify(options)}`),
        (err) => err,
      )
      assert.ok(e instanceof InvalidProcessOptionError, `${e}`)
      assert.equal(e.code, 'INVALID_PROCESS_OPTION')
      assert.ok(e.message.includes(field), `${e.message} names ${field}`)
    }
  }
  assert.match((await pm.exec(['true'], { readiness: { log: '/(a)\\1/' } }).catch((e) => e)).message, /linear time/)
  await assert.rejects(pm.createTerminal({ readiness: { port: 80 } }), InvalidProcessOptionError)
  assert.deepEqual(markedPids(marker), [], 'nothing was started')
  assert.deepEqual((await pm.listProcesses()).filter((s) => s.state === 'running' && s.command.includes('sleep 30')), [])
})
