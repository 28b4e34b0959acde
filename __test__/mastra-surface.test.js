'use strict'
// The Mastra surface (its types, `ProcessHandle` and `SandboxProcessManager`), standalone,
// against real processes.
const test = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const { Readable, Writable } = require('node:stream')
const { ProcessManager, InvalidProcessOptionError, InvalidProcessCwdError, ProcessAlreadyExitedError } = require('..')
const { tempDir, alive, eventually } = require('./helpers')

const tmp = tempDir('procvisor-mastra-')
fs.mkdirSync(path.join(tmp, 'sub'))
const pm = new ProcessManager({ workingDirectory: tmp })
test.after(() => pm.close())

const sleep = (ms) => new Promise((r) => setTimeout(r, ms))

function pgidOf(pid) {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8')
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[2])
}

test.describe('Types', () => {
  test('pid is the decimal OS pid as a string', async () => {
    const h = await pm.spawn('sleep 5')
    assert.equal(typeof h.pid, 'string')
    assert.match(h.pid, /^\d+$/)
    assert.equal(process.kill(Number(h.pid), 0), true)
    await h.kill()
    await h.wait()
  })

  test('maxRetainedBytes: default 1 MiB, 0 keeps none, Infinity keeps all, others are RangeError', async () => {
    const big = await pm.spawn('head -c 1500000 /dev/zero | tr "\\0" a')
    const r = await big.wait()
    assert.equal(r.stdout.length, 1048576)
    assert.equal(r.stdoutTruncated, true)
    assert.equal(r.stdoutDroppedBytes, 1500000 - 1048576)

    const none = await pm.spawn('echo hello', { maxRetainedBytes: 0 })
    const r0 = await none.wait()
    assert.equal(r0.stdout, '')
    assert.equal(r0.stdoutTruncated, true)
    assert.equal(r0.stdoutDroppedBytes, 6)

    const all = await pm.spawn('head -c 1500000 /dev/zero | tr "\\0" b', { maxRetainedBytes: Infinity })
    const ra = await all.wait()
    assert.equal(ra.stdout.length, 1500000)
    assert.equal(ra.stdoutTruncated, undefined)

    for (const bad of [-1, 1.5, NaN, '10', null, -Infinity]) {
      await assert.rejects(pm.spawn('true', { maxRetainedBytes: bad }), (e) => e instanceof RangeError && e instanceof InvalidProcessOptionError, `maxRetainedBytes ${bad}`)
    }
  })

  test("stdinMode 'ignore' gives the child EOF at once", async () => {
    const h = await pm.spawn('cat; echo after-eof', { stdinMode: 'ignore' })
    const r = await h.wait()
    assert.equal(r.stdout, 'after-eof\n')
  })

  test('CommandResult has the documented fields', async () => {
    const h = await pm.spawn('echo out; echo err >&2')
    const r = await h.wait()
    assert.deepEqual(Object.keys(r).sort(), ['executionTimeMs', 'exitCode', 'stderr', 'stdout', 'success'])
    assert.equal(r.success, true)
    assert.equal(r.exitCode, 0)
    assert.equal(r.stdout, 'out\n')
    assert.equal(r.stderr, 'err\n')
    assert.ok(r.executionTimeMs >= 0)
  })
})

test.describe('ProcessHandle', () => {
  test('exitCode is undefined while running, command is set and writable', async () => {
    const h = await pm.spawn('sleep 0.2; exit 7')
    assert.equal(h.exitCode, undefined)
    assert.equal(h.command, 'sleep 0.2; exit 7')
    h.command = 'renamed'
    assert.equal(h.command, 'renamed')
    const r = await h.wait()
    assert.equal(h.exitCode, 7)
    assert.equal(r.exitCode, 7)
    assert.equal(r.success, false)
  })

  test('retention keeps the newest bytes and never splits a code point', async () => {
    // "ab" + 🙂 (4 bytes) + "cd": the newest 5 bytes would start inside 🙂, so only "cd" is kept.
    const h = await pm.spawn("printf 'ab\\360\\237\\231\\202cd'", { maxRetainedBytes: 5 })
    const r = await h.wait()
    assert.equal(r.stdout, 'cd')
    assert.equal(h.stdout, 'cd')
    assert.equal(h.stdoutTruncated, true)
    assert.equal(h.stdoutDroppedBytes, 6)
    const big = await pm.spawn("printf '\\360\\237\\231\\202'", { maxRetainedBytes: 3 })
    const rb = await big.wait()
    assert.equal(rb.stdout, '', 'a code point larger than the limit is dropped whole')
    assert.equal(rb.stdoutDroppedBytes, 4)
  })

  test('stderr retention is separate', async () => {
    const h = await pm.spawn('echo 12345 >&2; echo x', { maxRetainedBytes: 3 })
    const r = await h.wait()
    assert.equal(r.stderr, '45\n')
    assert.equal(r.stderrTruncated, true)
    assert.equal(r.stderrDroppedBytes, 3)
    assert.equal(r.stdout, 'x\n')
    assert.equal(r.stdoutTruncated, undefined)
  })

  test('a multi-byte character split across two reads arrives whole', async () => {
    const got = []
    const h = await pm.spawn("printf '\\360\\237'; sleep 0.01; printf '\\231\\202'", { onStdout: (d) => got.push(d) })
    const r = await h.wait()
    assert.deepEqual(got, ['🙂'])
    assert.equal(r.stdout, '🙂')
  })

  test('spawn listeners see every chunk even with retention 0; wait listeners are removed when it settles', async () => {
    const spawnOut = []
    const spawnErr = []
    const h = await pm.spawn('for i in 1 2 3; do echo o$i; echo e$i >&2; sleep 0.02; done', {
      maxRetainedBytes: 0,
      onStdout: (d) => spawnOut.push(d),
      onStderr: (d) => spawnErr.push(d),
    })
    const waitOut = []
    const r = await h.wait({ onStdout: (d) => waitOut.push(d) })
    assert.equal(spawnOut.join(''), 'o1\no2\no3\n')
    assert.equal(spawnErr.join(''), 'e1\ne2\ne3\n')
    assert.ok(waitOut.join('').length > 0 && 'o1\no2\no3\n'.endsWith(waitOut.join('')))
    assert.equal(r.stdout, '')

    // A wait listener is gone after its wait settled: a second process proves it with a live one.
    const late = []
    const h2 = await pm.spawn('sleep 0.1; echo later')
    const w = h2.wait({ onStdout: (d) => late.push(d) })
    await w
    assert.deepEqual(late, ['later\n'])
    assert.equal(h2._port.listeners[0].size, 0)
  })

  test('the handle is returned before any output callback fires', async () => {
    let handle
    let sawHandle = null
    handle = await pm.spawn('echo first', {
      onStdout: () => {
        if (sawHandle === null) sawHandle = handle !== undefined
      },
    })
    await handle.wait()
    assert.equal(sawHandle, true)
  })

  test('wait is idempotent and holds all output', async () => {
    const h = await pm.spawn('seq 1 20000')
    const [a, b] = await Promise.all([h.wait(), h.wait()])
    const c = await h.wait()
    assert.deepEqual(a, b)
    assert.deepEqual(a, c)
    assert.equal(a.stdout.split('\n').length, 20001)
  })

  test('an abort during wait kills the process', async () => {
    const h = await pm.spawn('sleep 30')
    const ac = new AbortController()
    setTimeout(() => ac.abort(), 50)
    const r = await h.wait({ abortSignal: ac.signal })
    assert.equal(r.exitCode, 128)
    assert.equal(r.killed, true)
  })

  test('abortSignal at spawn kills the process', async () => {
    const ac = new AbortController()
    const h = await pm.spawn('sleep 30', { abortSignal: ac.signal })
    ac.abort()
    const r = await h.wait()
    assert.equal(r.exitCode, 128)
  })

  test('kill: SIGKILL to the whole group, true at once, false once exited, safe twice', async () => {
    const h = await pm.spawn('sleep 30 & echo $!; wait')
    const grandchild = Number((await eventually(() => h.stdout.trim(), 3000)) || NaN)
    assert.ok(alive(grandchild))
    const [k1, k2] = await Promise.all([h.kill(), h.kill()])
    assert.equal(k1, true)
    assert.equal(typeof k2, 'boolean')
    const r = await h.wait()
    assert.equal(r.exitCode, 128)
    assert.equal(r.killed, true)
    assert.ok(await eventually(() => !alive(grandchild)), 'grandchild is dead')
    assert.equal(await h.kill(), false)
  })

  test('sendStdin: ordered writes, rejects after exit with the Mastra message', async () => {
    const h = await pm.spawn('cat')
    for (let i = 0; i < 100; i++) await h.sendStdin(`${i};`)
    await h.closeStdin()
    const r = await h.wait()
    assert.equal(r.stdout, Array.from({ length: 100 }, (_, i) => `${i};`).join(''))
    await assert.rejects(h.sendStdin('late'), (e) => e instanceof ProcessAlreadyExitedError && e.message === `Process ${h.pid} has already exited with code 0`)
  })

  test("sendStdin and closeStdin reject with a message naming stdin under stdinMode 'ignore'", async () => {
    const h = await pm.spawn('sleep 0.3', { stdinMode: 'ignore' })
    await assert.rejects(h.sendStdin('x'), /stdin/)
    await assert.rejects(h.closeStdin(), /stdin/)
    await h.wait()
  })

  test('closeStdin sends EOF, is idempotent, and rejects after exit', async () => {
    const h = await pm.spawn('wc -c; sleep 0.3')
    await h.sendStdin('12345')
    await h.closeStdin()
    await h.closeStdin()
    const r = await h.wait()
    assert.equal(r.stdout.trim(), '5')
    await assert.rejects(h.closeStdin(), /has already exited/)
  })

  test('reader is a Readable of stdout that ends at exit; writer is a Writable whose end() closes stdin', async () => {
    const h = await pm.spawn('cat; echo done')
    assert.ok(h.reader instanceof Readable)
    assert.ok(h.writer instanceof Writable)
    assert.equal(h.reader, h.reader, 'lazy and stable')
    const chunks = []
    const ended = new Promise((resolve) => h.reader.on('end', resolve))
    h.reader.on('data', (c) => chunks.push(c))
    h.writer.write('a')
    h.writer.write('b')
    h.writer.end('c')
    await ended
    assert.equal(Buffer.concat(chunks).toString(), 'abcdone\n')
    assert.equal((await h.wait()).exitCode, 0)
  })

  test('exit codes: own code, 124 on timeout with the message, 128 when killed by a signal', async () => {
    const own = await (await pm.spawn('exit 42')).wait()
    assert.equal(own.exitCode, 42)
    const t = await pm.spawn('sleep 5', { timeout: 100 })
    const rt = await t.wait()
    assert.equal(rt.exitCode, 124)
    assert.equal(rt.timedOut, true)
    assert.match(rt.stderr, /\nProcess timed out after 100ms$/)
    assert.match(t.stderr, /\nProcess timed out after 100ms$/)
    const s = await (await pm.spawn('kill -TERM $$')).wait()
    assert.equal(s.exitCode, 128)
    assert.equal(s.killed, true)
  })

  test('executionTimeMs is fractional and close to the run time', async () => {
    const r = await (await pm.spawn('sleep 0.1')).wait()
    assert.ok(r.executionTimeMs >= 90 && r.executionTimeMs < 5000, String(r.executionTimeMs))
    // Measured to the nanosecond: a whole number of milliseconds comes once in a million runs
    // (rounding to microseconds, as before, hit a whole millisecond once in a thousand).
    assert.equal(Number.isInteger(r.executionTimeMs), false, String(r.executionTimeMs))
  })
})

test.describe('SandboxProcessManager', () => {
  test('spawn runs /bin/sh -c in a new process group', async () => {
    const h = await pm.spawn('echo $0; sleep 5')
    await eventually(() => h.stdout)
    assert.equal(h.stdout, '/bin/sh\n')
    assert.equal(pgidOf(Number(h.pid)), Number(h.pid))
    assert.notEqual(pgidOf(Number(h.pid)), pgidOf(process.pid))
    await pm.kill(h.pid)
  })

  test('cwd: default, absolute, relative, "." and a missing one rejects with ENOENT and tracks nothing', async () => {
    assert.equal((await (await pm.spawn('pwd')).wait()).stdout, `${tmp}\n`)
    assert.equal((await (await pm.spawn('pwd', { cwd: '/' })).wait()).stdout, '/\n')
    assert.equal((await (await pm.spawn('pwd', { cwd: 'sub' })).wait()).stdout, `${path.join(tmp, 'sub')}\n`)
    assert.equal((await (await pm.spawn('pwd', { cwd: '.' })).wait()).stdout, `${tmp}\n`)
    const before = (await pm.list()).length
    await assert.rejects(pm.spawn('true', { cwd: 'nope' }), (e) => e instanceof InvalidProcessCwdError && /ENOENT|no such file or directory|cwd/i.test(e.message))
    assert.equal((await pm.list()).length, before)
  })

  test('a missing command is not a spawn failure: exit 127 and "not found"', async () => {
    const r = await (await pm.spawn('definitely-not-a-command-xyz')).wait()
    assert.equal(r.exitCode, 127)
    assert.match(r.stderr, /not found/)
  })

  test('env is exactly PATH + manager env + call env; undefined drops a name; nothing else is inherited', async () => {
    process.env.PROCVISOR_SECRET_MARKER = 'leaked'
    try {
      const m = new ProcessManager({ workingDirectory: tmp, env: { A: 'sandbox', B: 'sandbox', C: 'drop-me' } })
      const r = await (await m.spawn('env', { env: { B: 'call', C: undefined, D: 'd' } })).wait()
      const env = Object.fromEntries(r.stdout.trim().split('\n').map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]))
      delete env.PWD // sh exports it
      delete env.SHLVL
      delete env._
      assert.deepEqual(env, { PATH: process.env.PATH, A: 'sandbox', B: 'call', D: 'd' })
      await m.close()
    } finally {
      delete process.env.PROCVISOR_SECRET_MARKER
    }
  })

  test('timeout signals the whole group: "sleep 2 && echo done" never prints done', async () => {
    const r = await (await pm.spawn('sleep 2 && echo done', { timeout: 100 })).wait()
    assert.equal(r.exitCode, 124)
    assert.ok(!r.stdout.includes('done'))
  })

  test('list() shows running and exited handles with their command', async () => {
    const m = new ProcessManager({ workingDirectory: tmp })
    const a = await m.spawn('sleep 5')
    const b = await m.spawn('exit 3')
    await b.wait()
    const list = await m.list()
    // Under cgroup containment each entry also has the tree's CPU time; a running one, the
    // memory it holds now.
    for (const info of list) {
      assert.equal(typeof info.cpuTimeMs === 'number', m.containment === 'cgroup')
      if (info.running) assert.ok(info.memoryBytes > 0, `memoryBytes ${info.memoryBytes}`)
      delete info.cpuTimeMs
      delete info.memoryBytes
    }
    assert.deepEqual(
      list.sort((x, y) => x.command.localeCompare(y.command)),
      [
        { pid: b.pid, command: 'exit 3', running: false, exitCode: 3 },
        { pid: a.pid, command: 'sleep 5', running: true },
      ],
    )
    await m.close()
  })

  test('get() prunes on read: the first get after exit returns the handle, the second undefined', async () => {
    const h = await pm.spawn('sleep 0.2')
    assert.equal(await pm.get(h.pid), h, 'running: stays tracked')
    assert.equal(await pm.get(h.pid), h)
    await h.wait()
    assert.equal(await pm.get(h.pid), h)
    assert.equal(await pm.get(h.pid), undefined)
    assert.equal(await pm.get('999999999'), undefined)
  })

  test('kill(pid): false for unknown; kills, waits, releases; handle.kill alone does not untrack', async () => {
    assert.equal(await pm.kill('999999999'), false)
    const h = await pm.spawn('sleep 30')
    assert.equal(await pm.kill(h.pid), true)
    assert.equal(h.exitCode, 128)
    assert.equal(await pm.get(h.pid), undefined)
    const h2 = await pm.spawn('sleep 30')
    assert.equal(await h2.kill(), true)
    await h2.wait()
    assert.equal(await pm.get(h2.pid), h2, 'still tracked after handle.kill()')
  })

  test('release(pid) forgets a handle; a reused pid becomes visible again after a new spawn', async () => {
    const h = await pm.spawn('sleep 0.05')
    await h.wait()
    pm.release(h.pid)
    assert.equal(await pm.get(h.pid), undefined)
    assert.ok(!(await pm.list()).some((i) => i.pid === h.pid))
    const again = await pm.spawn('sleep 0.05')
    assert.equal(await pm.get(again.pid), again)
    await again.wait()
  })

  test('concurrent processes are tracked independently', async () => {
    const hs = await Promise.all(Array.from({ length: 10 }, (_, i) => pm.spawn(`sleep 0.0${i}; echo ${i}; exit ${i}`)))
    const rs = await Promise.all(hs.map((h) => h.wait()))
    rs.forEach((r, i) => {
      assert.equal(r.exitCode, i)
      assert.equal(r.stdout, `${i}\n`)
    })
    assert.equal(new Set(hs.map((h) => h.pid)).size, 10)
  })

  test('bad input: an empty command, a bad env, bad callbacks are typed errors and the manager keeps working', async () => {
    await assert.rejects(pm.spawn(''), { code: 'INVALID_PROCESS_COMMAND' })
    await assert.rejects(pm.spawn(42), { code: 'INVALID_PROCESS_COMMAND' })
    await assert.rejects(pm.spawn('true', { env: { 'A=B': 'x' } }), { code: 'INVALID_PROCESS_ENVIRONMENT' })
    await assert.rejects(pm.spawn('true', { env: { A: 'x\0y' } }), { code: 'INVALID_PROCESS_ENVIRONMENT' })
    await assert.rejects(pm.spawn('true', { env: { A: 5 } }), { code: 'INVALID_PROCESS_ENVIRONMENT' })
    await assert.rejects(pm.spawn('true', { timeout: -1 }), { code: 'INVALID_PROCESS_OPTION' })
    await assert.rejects(pm.spawn('true', { timeout: NaN }), { code: 'INVALID_PROCESS_OPTION' })
    await assert.rejects(pm.spawn('true', { onStdout: 'nope' }), { code: 'INVALID_PROCESS_OPTION' })
    await assert.rejects(pm.spawn('true', { stdinMode: 'inherit' }), { code: 'INVALID_PROCESS_OPTION' })
    await assert.rejects(pm.spawn('echo a\0b'), { code: 'INVALID_PROCESS_COMMAND' })
    assert.equal((await (await pm.spawn('echo still-works')).wait()).stdout, 'still-works\n')
  })
})
