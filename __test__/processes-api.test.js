'use strict'
// The Processes API (`exec`, `getProcess`, `listProcesses` and `Process`): its semantics, against
// real processes.
const test = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const procvisor = require('..')
const { ProcessManager } = procvisor
const { tempDir, alive, commOf, eventually, freePort } = require('./helpers')

const tmp = tempDir('procvisor-api-')
const pm = new ProcessManager({ workingDirectory: tmp })
test.after(() => pm.close())
const SERVER = path.join(__dirname, 'fixtures', 'http-server.js')

async function collect(stream) {
  const events = []
  for await (const e of stream) events.push(e)
  return events
}

const text = (events, type) => Buffer.concat(events.filter((e) => e.type === type).map((e) => Buffer.from(e.data))).toString()

test.describe('exec: argv, env, cwd, spawn errors', () => {
  test('argv is passed as is: no shell, empty strings kept', async () => {
    const p = await pm.exec(['printf', '[%s]', '$HOME', '', 'a b', '*'])
    const out = await p.output({ encoding: 'utf8' })
    assert.equal(out.stdout, '[$HOME][][a b][*]')
    assert.equal(out.exitCode, 0)
    assert.equal(typeof p.id, 'string')
    assert.equal(typeof p.pid, 'number')
    assert.equal(await p.exitCode, 0)
  })

  test('argv and env reach the child exactly: quotes, escapes, controls, non-ASCII, long, lone surrogates', async () => {
    const args = ['"q" \\b\\ /s \\u0041', 'tab\there\nline\r\u0001\u001f\u007f', 'é 漢字 🙂', 'x'.repeat(5000), '']
    const env = { V: 'é"\\\n🙂', EMPTY: '' }
    const show = 'process.stdout.write(JSON.stringify([process.argv.slice(1), process.env.V, process.env.EMPTY, process.env.W]))'
    const run = async (argv, envs) => JSON.parse((await (await pm.exec([process.execPath, '-e', show, ...argv], { env: envs })).output({ encoding: 'utf8' })).stdout)
    // A request of plain values crosses into native code as JSON; one with a lone surrogate (not
    // JSON-faithful) as the object. Both must give the child the same bytes, a lone surrogate as U+FFFD.
    assert.deepEqual(await run(args, env), [args, env.V, '', null])
    assert.deepEqual(await run([...args, 'a\ud800b'], { ...env, W: '\udc00' }), [[...args, 'a\ufffdb'], env.V, '', '\ufffd'])
  })

  test('shell syntax needs an explicit shell', async () => {
    const out = await (await pm.exec(['/bin/sh', '-c', 'echo $((1+2)) | tr 3 x'])).output({ encoding: 'utf8' })
    assert.equal(out.stdout, 'x\n')
  })

  test('command[0] must be a non-empty string', async () => {
    for (const bad of [[], [''], [42], 'echo hi', undefined, ['echo', 5]]) {
      await assert.rejects(pm.exec(bad), procvisor.InvalidProcessCommandError, JSON.stringify(bad))
    }
    await assert.rejects(pm.exec(['echo', 'a\0b']), { code: 'INVALID_PROCESS_COMMAND' })
  })

  test('env overlays this launch only; bad names and values are InvalidProcessEnvironmentError', async () => {
    const out = await (await pm.exec(['/bin/sh', '-c', 'echo "$ONE|$TWO"'], { env: { ONE: '1', TWO: '' } })).output({ encoding: 'utf8' })
    assert.equal(out.stdout, '1|\n')
    const again = await (await pm.exec(['/bin/sh', '-c', 'echo "$ONE"'])).output({ encoding: 'utf8' })
    assert.equal(again.stdout, '\n', 'the overlay does not stick')
    for (const env of [{ '': 'x' }, { 'A=B': 'x' }, { 'A\0': 'x' }, { A: 'x\0y' }, { A: 1 }, 'A=1']) {
      await assert.rejects(pm.exec(['true'], { env }), (e) => e instanceof procvisor.InvalidProcessEnvironmentError && e.code === 'INVALID_PROCESS_ENVIRONMENT')
    }
  })

  test('a cwd that is missing or not a directory is InvalidProcessCwdError, checked before launch', async () => {
    const file = path.join(tmp, 'a-file')
    fs.writeFileSync(file, 'x')
    for (const cwd of ['/no/such/dir', file, 42]) {
      await assert.rejects(pm.exec(['true'], { cwd }), procvisor.InvalidProcessCwdError)
    }
    const out = await (await pm.exec(['pwd'], { cwd: '/' })).output({ encoding: 'utf8' })
    assert.equal(out.stdout, '/\n')
  })

  test('an executable that cannot be started is ProcessSpawnFailedError', async () => {
    const noexec = path.join(tmp, 'not-executable')
    fs.writeFileSync(noexec, '#!/bin/sh\necho hi\n', { mode: 0o644 })
    for (const argv of [['definitely-not-a-program-xyz'], ['/no/such/program'], [noexec]]) {
      await assert.rejects(pm.exec(argv), (e) => e instanceof procvisor.ProcessSpawnFailedError && e.code === 'PROCESS_SPAWN_FAILED', argv[0])
    }
  })

  test('timeout: SIGTERM to the group, SIGKILL after the grace; the exit says timedOut', async () => {
    const p = await pm.exec(['/bin/sh', '-c', "trap '' TERM; while :; do sleep 0.05; done"], { timeout: 100, gracePeriod: 200 })
    const exit = await p.waitForExit({ timeout: 5000 })
    assert.deepEqual(exit, { code: 137, signal: 9, timedOut: true })
    const q = await pm.exec(['sleep', '5'], { timeout: 50 })
    assert.deepEqual(await q.waitForExit(), { code: 143, signal: 15, timedOut: true })
  })
})

test.describe('process group semantics', () => {
  test('a root that exits while its background child lives stays running until the child dies', async () => {
    const p = await pm.exec(['/bin/sh', '-c', 'sleep 0.5 >/dev/null 2>&1 & exit 3'])
    await eventually(async () => !alive(p.pid), 2000)
    assert.equal(alive(p.pid), false, 'the root is gone')
    assert.equal((await p.status()).state, 'running')
    const exit = await p.waitForExit({ timeout: 5000 })
    assert.deepEqual(exit, { code: 3, timedOut: false }, 'the outcome is the root\'s')
    const st = await p.status()
    assert.equal(st.state, 'exited')
    assert.deepEqual(st.exit, exit)
    assert.ok(Date.parse(st.endedAt) >= Date.parse(st.startedAt))
  })

  test('signals that reach only a descendant do not change the outcome', async () => {
    const p = await pm.exec(['/bin/sh', '-c', 'sleep 30 & kill -9 $!; wait; exit 5'])
    assert.deepEqual(await p.waitForExit(), { code: 5, timedOut: false })
  })

  test('kill signals the group, resolves once delivered, never escalates', async () => {
    const p = await pm.exec(['/bin/sh', '-c', "trap 'echo got-term' TERM; sleep 30 & echo $!; while :; do sleep 0.05; done"])
    const line = await p.waitForLog(/\d+\n/)
    const bg = Number(line.match.trim())
    // Until the background child has exec'd sleep it is a forked shell that still runs the TERM trap,
    // and the shell drops a trapped signal that arrives in that window: wait for the exec.
    assert.equal(await eventually(() => commOf(bg) === 'sleep'), true, 'the background sleep started')
    await p.kill()
    await p.waitForLog('got-term')
    assert.equal((await p.status()).state, 'running', 'a trapped SIGTERM is not escalated')
    assert.ok(await eventually(() => !alive(bg)), 'the background sleep got SIGTERM too')
    await p.kill(9)
    assert.deepEqual(await p.waitForExit({ timeout: 5000 }), { code: 137, signal: 9, timedOut: false })
  })

  test('kill(0), kill(65), non-integers and unknown names are refused before anything is sent', async () => {
    const p = await pm.exec(['sleep', '30'])
    for (const sig of [0, 65, -1, 1.5, 'SIGNOPE', '15', NaN, null]) {
      await assert.rejects(p.kill(sig), (e) => e instanceof procvisor.InvalidProcessSignalError && e.code === 'INVALID_PROCESS_SIGNAL', String(sig))
    }
    assert.equal((await p.status()).state, 'running')
    assert.ok(alive(p.pid))
    await p.kill(64 - 30) // SIGRTMIN range: sleep dies of it
    await p.waitForExit()
  })
})

test.describe('observation is not control', () => {
  test('waitForExit timeout and abort end only the wait', async () => {
    const p = await pm.exec(['sleep', '30'])
    await assert.rejects(p.waitForExit({ timeout: 50 }), (e) => e instanceof procvisor.ProcessWaitTimeoutError && e.code === 'PROCESS_WAIT_TIMEOUT')
    const ac = new AbortController()
    setTimeout(() => ac.abort(), 30)
    await assert.rejects(p.waitForExit({ signal: ac.signal }), (e) => e instanceof procvisor.ProcessAbortedError && e.code === 'PROCESS_ABORTED')
    assert.equal((await p.status()).state, 'running')
    assert.ok(alive(p.pid))
    await assert.rejects(p.output({ timeout: 30 }), procvisor.ProcessWaitTimeoutError)
    await assert.rejects(p.waitForLog('never', { timeout: 30 }), procvisor.ProcessWaitTimeoutError)
    await assert.rejects(p.waitForPort(1, { timeout: 30, interval: 10 }), procvisor.ProcessReadyTimeoutError)
    const ac2 = new AbortController()
    const logs = await p.logs({ follow: true, signal: ac2.signal })
    const reading = collect(logs)
    setTimeout(() => ac2.abort(), 30)
    await assert.rejects(reading, procvisor.ProcessAbortedError)
    assert.ok(alive(p.pid), 'still running after every aborted or timed-out wait')
    await p.kill(9)
  })

  test('an already-aborted signal rejects at once', async () => {
    const p = await pm.exec(['sleep', '1'])
    await assert.rejects(p.waitForExit({ signal: AbortSignal.abort() }), procvisor.ProcessAbortedError)
    await assert.rejects(p.waitForLog('x', { signal: AbortSignal.abort() }), procvisor.ProcessAbortedError)
    await p.kill(9)
  })
})

test.describe('logs', () => {
  test('one sequence of events with cursors, closed by a terminal event after all output', async () => {
    const p = await pm.exec(['/bin/sh', '-c', 'echo out; echo err >&2; exit 2'])
    await p.waitForExit()
    const events = await collect(await p.logs())
    assert.deepEqual(events.map((e) => e.type).sort(), ['stderr', 'stdout', 'terminal'])
    const last = events[events.length - 1]
    assert.equal(last.type, 'terminal')
    assert.equal(last.state, 'exited')
    assert.deepEqual(last.exit, { code: 2, timedOut: false })
    for (const e of events) {
      assert.equal(typeof e.cursor, 'string')
      assert.ok(!Number.isNaN(Date.parse(e.timestamp)))
      if (e.type !== 'terminal') assert.ok(e.data instanceof Uint8Array)
    }
    assert.equal(text(events, 'stdout'), 'out\n')
    assert.equal(text(events, 'stderr'), 'err\n')
    assert.equal(new Set(events.map((e) => e.cursor)).size, events.length)
  })

  test('since is strictly after that event; replay: false skips history', async () => {
    const p = await pm.exec(['/bin/sh', '-c', 'echo a; sleep 0.05; echo b; sleep 0.05; echo c'])
    await p.waitForExit()
    const all = await collect(await p.logs())
    const afterFirst = await collect(await p.logs({ since: all[0].cursor }))
    assert.deepEqual(afterFirst.map((e) => e.cursor), all.slice(1).map((e) => e.cursor))
    const none = await collect(await p.logs({ replay: false }))
    assert.deepEqual(none, [])
  })

  test('replay then follow under a fast producer: every byte exactly once, in order', async () => {
    const p = await pm.exec(['/bin/sh', '-c', 'sleep 0.05; seq 1 100000'])
    const events = await collect(await p.logs({ replay: true, follow: true }))
    assert.ok(!events.some((e) => e.type === 'truncated'))
    const expected = Array.from({ length: 100000 }, (_, i) => `${i + 1}\n`).join('')
    assert.equal(text(events, 'stdout'), expected)
    assert.equal(events[events.length - 1].type, 'terminal')
  })

  test('resume from a kept cursor: replay + follow has no gap and no duplicate', async () => {
    const p = await pm.exec(['/bin/sh', '-c', 'for i in $(seq 1 40); do echo $i; sleep 0.005; done'])
    const first = (await p.logs({ follow: true })).getReader()
    const got = []
    let cursor
    while (got.length < 5) {
      const { value } = await first.read()
      if (value.type === 'stdout') {
        got.push(Buffer.from(value.data).toString())
        cursor = value.cursor
      }
    }
    await first.cancel()
    const rest = await collect(await p.logs({ since: cursor, replay: true, follow: true }))
    const all = got.join('') + text(rest, 'stdout')
    assert.equal(all, Array.from({ length: 40 }, (_, i) => `${i + 1}\n`).join(''))
  })

  test('a reader that fell behind the bounded log gets one truncated event and resumes at the oldest', async () => {
    const p = await pm.exec(['/bin/sh', '-c', 'head -c 3000000 /dev/zero'])
    await p.waitForExit()
    const events = await collect(await p.logs())
    assert.equal(events[0].type, 'truncated')
    assert.equal(events.filter((e) => e.type === 'truncated').length, 1)
    const bytes = events.filter((e) => e.type === 'stdout').reduce((n, e) => n + e.data.length, 0)
    assert.ok(bytes <= 1024 * 1024 && bytes > 0, `kept ${bytes}`)
    assert.equal(events[events.length - 1].type, 'terminal')
    const out = await p.output()
    assert.equal(out.truncated, true, 'output() reports the eviction too')
  })

  test('cursors of another process, malformed or from the future are InvalidProcessCursorError', async () => {
    const a = await pm.exec(['echo', 'a'])
    const b = await pm.exec(['echo', 'b'])
    await a.waitForExit()
    await b.waitForExit()
    const [ea] = await collect(await a.logs())
    await assert.rejects(b.logs({ since: ea.cursor }), (e) => e instanceof procvisor.InvalidProcessCursorError && /another process/.test(e.message))
    for (const bad of ['', 'garbage', ea.cursor.slice(0, -1), ea.cursor + 'x', 42]) {
      await assert.rejects(a.logs({ since: bad }), procvisor.InvalidProcessCursorError, String(bad))
    }
    const future = ea.cursor.replace(/\.(\d+|[0-9a-f]+)\.([0-9a-f]{8})$/, '.ff.00000000')
    await assert.rejects(a.logs({ since: future }), procvisor.InvalidProcessCursorError)
  })

  test('many subscribers are independent; a cancelled one blocks nobody', async () => {
    const p = await pm.exec(['/bin/sh', '-c', 'for i in $(seq 1 50); do echo $i; sleep 0.002; done'])
    const slow = await p.logs({ follow: true })
    const cancelled = await p.logs({ follow: true })
    await cancelled.cancel()
    const [a, b] = await Promise.all([collect(await p.logs({ follow: true })), collect(await p.logs({ follow: true }))])
    assert.equal(text(a, 'stdout'), text(b, 'stdout'))
    assert.equal(text(a, 'stdout').split('\n').length, 51)
    assert.equal(text(await collect(slow), 'stdout'), text(a, 'stdout'))
  })
})

test.describe('output', () => {
  test('binary by default, utf8 on request, with the exit fields', async () => {
    const p = await pm.exec(['/bin/sh', '-c', "printf '\\377\\000ok'; printf 'e' >&2; exit 1"])
    const bin = await p.output()
    assert.ok(bin.stdout instanceof Uint8Array)
    assert.deepEqual([...bin.stdout], [0xff, 0x00, 0x6f, 0x6b])
    assert.deepEqual(bin.stderr, new Uint8Array([0x65]))
    assert.equal(bin.exitCode, 1)
    assert.equal(bin.timedOut, false)
    assert.equal(bin.truncated, false)
    assert.equal('signal' in bin, false)
    const utf = await p.output({ encoding: 'utf8' })
    assert.equal(utf.stdout, '\ufffd\u0000ok', 'invalid UTF-8 becomes U+FFFD in text views')
  })

  test('maxBytes caps each stream and sets truncated; bad values are refused', async () => {
    const p = await pm.exec(['/bin/sh', '-c', 'echo 0123456789; echo abcdefghij >&2'])
    const out = await p.output({ encoding: 'utf8', maxBytes: 4 })
    assert.equal(out.stdout, '0123')
    assert.equal(out.stderr, 'abcd')
    assert.equal(out.truncated, true)
    for (const maxBytes of [-1, NaN, Infinity, '4']) {
      await assert.rejects(p.output({ maxBytes }), { code: 'INVALID_PROCESS_OPTION' })
    }
    await assert.rejects(p.output({ encoding: 'latin1' }), { code: 'INVALID_PROCESS_OPTION' })
  })

  test('output written right before exit is never lost', async () => {
    for (let i = 0; i < 20; i++) {
      const out = await (await pm.exec(['/bin/sh', '-c', `printf 'last-${i}'`])).output({ encoding: 'utf8' })
      assert.equal(out.stdout, `last-${i}`)
    }
  })
})

test.describe('waitForLog', () => {
  test('string and RegExp patterns; the result names stream, text, match and cursor', async () => {
    const p = await pm.exec(['/bin/sh', '-c', 'echo starting; sleep 0.05; echo "listening on port 4321"; sleep 5'])
    const s = await p.waitForLog('listening')
    assert.equal(s.stream, 'stdout')
    assert.equal(s.match, 'listening')
    assert.ok(s.text.includes('listening on port 4321'))
    assert.equal(typeof s.cursor, 'string')
    const r = await p.waitForLog(/port (\d+)/g)
    assert.equal(r.match, 'port 4321')
    const again = await p.waitForLog(/port (\d+)/g)
    assert.equal(again.match, 'port 4321', 'a global RegExp is not stateful across calls')
    const after = await collect(await p.logs({ since: s.cursor }))
    assert.ok(!text(after, 'stdout').includes('listening'), 'the cursor points at the matching event')
    await p.kill(9)
  })

  test('a pattern printed on stderr; the stream option filters', async () => {
    const p = await pm.exec(['/bin/sh', '-c', 'echo ready >&2; sleep 0.1; echo ready'])
    const r = await p.waitForLog('ready', { stream: 'stderr' })
    assert.equal(r.stream, 'stderr')
    const o = await p.waitForLog('ready', { stream: 'stdout' })
    assert.equal(o.stream, 'stdout')
    await assert.rejects(p.waitForLog('ready', { stream: 'both-ish' }), { code: 'INVALID_PROCESS_OPTION' })
    await assert.rejects(p.waitForLog(42), { code: 'INVALID_PROCESS_OPTION' })
  })

  test('a character split across two writes is matched whole', async () => {
    const p = await pm.exec(['/bin/sh', '-c', "printf 'go \\360\\237'; sleep 0.05; printf '\\231\\202 now'; sleep 2"])
    const r = await p.waitForLog('🙂 now')
    assert.equal(r.match, '🙂 now')
    await p.kill(9)
  })

  test('a match spanning two chunks is found', async () => {
    const p = await pm.exec(['/bin/sh', '-c', "printf 'abc'; sleep 0.05; printf 'def'; sleep 2"])
    assert.equal((await p.waitForLog(/c\s*d/)).match, 'cd')
    await p.kill(9)
  })

  test('exit before the line is ProcessExitedBeforeLogError', async () => {
    const p = await pm.exec(['/bin/sh', '-c', 'echo something else'])
    await assert.rejects(p.waitForLog('never printed'), (e) => e instanceof procvisor.ProcessExitedBeforeLogError && e.code === 'PROCESS_EXITED_BEFORE_LOG')
  })
})

test.describe('waitForPort', () => {
  test('tcp: succeeds once a real server accepts', async () => {
    const port = await freePort()
    const p = await pm.exec([process.execPath, SERVER, String(port), '200'])
    await p.waitForPort(port, { timeout: 10000, interval: 50 })
    await p.kill()
    await p.waitForExit()
  })

  test('http: path and status range; a status outside the range times out; the range can accept it', async () => {
    const port = await freePort()
    const p = await pm.exec([process.execPath, SERVER, String(port), '0', '503'])
    await p.waitForLog('listening')
    await assert.rejects(
      p.waitForPort(port, { mode: 'http', path: '/health', timeout: 300, interval: 50 }),
      (e) => e instanceof procvisor.ProcessReadyTimeoutError && /503/.test(e.message),
    )
    await p.waitForPort(port, { mode: 'http', path: '/health', status: { min: 500, max: 599 }, timeout: 5000 })
    await p.waitForPort(port, { mode: 'http', status: 503, timeout: 5000 })
    assert.equal((await p.status()).state, 'running', 'a ready timeout leaves the process running')
    await p.kill()
  })

  test('exit before the port opens is ProcessExitedBeforeReadyError', async () => {
    const port = await freePort()
    const p = await pm.exec(['/bin/sh', '-c', 'sleep 0.1; exit 1'])
    await assert.rejects(p.waitForPort(port, { interval: 20 }), (e) => e instanceof procvisor.ProcessExitedBeforeReadyError && e.code === 'PROCESS_EXITED_BEFORE_READY')
  })

  test('bad ports and options are refused', async () => {
    const p = await pm.exec(['sleep', '1'])
    for (const port of [0, 65536, 1.5, '80', -1]) await assert.rejects(p.waitForPort(port), { code: 'INVALID_PROCESS_OPTION' })
    await assert.rejects(p.waitForPort(80, { mode: 'udp' }), { code: 'INVALID_PROCESS_OPTION' })
    await assert.rejects(p.waitForPort(80, { status: { min: 300, max: 200 } }), { code: 'INVALID_PROCESS_OPTION' })
    await p.kill(9)
  })

  test('a Mastra handle has the same readiness and log methods (one process, two views)', async () => {
    const port = await freePort()
    const h = await pm.spawn(`exec ${JSON.stringify(process.execPath)} ${JSON.stringify(SERVER)} ${port} 100`)
    await h.waitForPort(port, { timeout: 10000, interval: 50 })
    const log = await h.waitForLog(`listening on ${port}`)
    assert.equal(log.stream, 'stdout')
    assert.equal(h.stdout, `listening on ${port}\n`)
    const view = await pm.getProcess(h.id)
    assert.equal(view.pid, Number(h.pid))
    assert.equal((await view.status()).state, 'running')
    await h.kill()
    assert.equal((await h.waitForExit()).signal, 9)
  })
})

test.describe('registry, errors and stale handles', () => {
  test('getProcess and listProcesses never throw for a missing target', async () => {
    assert.equal(await pm.getProcess('p-nope'), null)
    assert.equal(await pm.getProcess(42), null)
    const p = await pm.exec(['echo', 'x'])
    await p.waitForExit()
    assert.equal(await pm.getProcess(p.id), p)
    const list = await pm.listProcesses()
    const st = list.find((s) => s.id === p.id)
    assert.equal(st.state, 'exited')
    assert.deepEqual(st.command, ['echo', 'x'])
    assert.equal(st.cwd, tmp)
  })

  test('the last 64 exited processes are kept', async () => {
    const m = new ProcessManager()
    const ps = []
    for (let i = 0; i < 70; i++) ps.push(await m.exec(['true']))
    await Promise.all(ps.map((p) => p.waitForExit()))
    await m.exec(['true'])
    const ids = (await m.listProcesses()).map((s) => s.id)
    assert.ok(ids.length <= 65 && ids.length >= 64, String(ids.length))
    assert.equal(await m.getProcess(ps[0].id), null)
    assert.equal((await ps[0].status()).state, 'exited', 'a handle that is held stays readable')
    assert.notEqual(await m.getProcess(ps[69].id), null)
    await m.close()
  })

  test('every Processes API error class is exported with a stable code and instanceof works', () => {
    const codes = {
      StaleProcessHandleError: 'STALE_PROCESS_HANDLE',
      ProcessNotFoundError: 'PROCESS_NOT_FOUND',
      ProcessWaitTimeoutError: 'PROCESS_WAIT_TIMEOUT',
      ProcessAbortedError: 'PROCESS_ABORTED',
      ProcessReadyTimeoutError: 'PROCESS_READY_TIMEOUT',
      ProcessExitedBeforeReadyError: 'PROCESS_EXITED_BEFORE_READY',
      ProcessExitedBeforeLogError: 'PROCESS_EXITED_BEFORE_LOG',
      InvalidProcessCwdError: 'INVALID_PROCESS_CWD',
      InvalidProcessEnvironmentError: 'INVALID_PROCESS_ENVIRONMENT',
      InvalidProcessCursorError: 'INVALID_PROCESS_CURSOR',
      ProcessSpawnFailedError: 'PROCESS_SPAWN_FAILED',
    }
    for (const [name, code] of Object.entries(codes)) {
      const C = procvisor[name]
      assert.equal(typeof C, 'function', name)
      const e = new C('m')
      assert.ok(e instanceof C && e instanceof procvisor.ProcessError && e instanceof Error)
      assert.equal(e.code, code)
      assert.equal(C.code, code)
      assert.equal(e.name, name)
    }
  })

  test('close() kills everything; old handles are stale, the manager refuses new work', async () => {
    const m = new ProcessManager()
    const p = await m.exec(['sleep', '30'])
    const h = await m.spawn('sleep 30')
    await m.close()
    assert.equal(alive(p.pid), false)
    assert.equal(alive(Number(h.pid)), false)
    await assert.rejects(p.status(), (e) => e instanceof procvisor.StaleProcessHandleError && e.code === 'STALE_PROCESS_HANDLE')
    await assert.rejects(p.kill(), procvisor.StaleProcessHandleError)
    await assert.rejects(h.waitForExit(), procvisor.StaleProcessHandleError)
    assert.equal(await m.getProcess(p.id), null)
    assert.deepEqual(await m.listProcesses(), [])
    await assert.rejects(m.exec(['true']), procvisor.ProcessManagerClosedError)
    await assert.rejects(m.spawn('true'), procvisor.ProcessManagerClosedError)
    await m.close()
  })
})

// Settlements that arrive together are run by one callback of the JS thread, at most 1,024 at a
// time: the rest wait for the next turn of the loop. Thousands settled at once all arrive.
test('3,000 waits on one process settle together: every one resolves with the exit', async () => {
  const p = await pm.exec(['/bin/sh', '-c', 'sleep 0.3; exit 5'])
  const exits = await Promise.all(Array.from({ length: 3000 }, () => p.waitForExit()))
  assert.equal(exits.length, 3000)
  for (const e of exits) assert.deepEqual(e, { code: 5, timedOut: false })
  assert.equal(await p.exitCode, 5)
})
