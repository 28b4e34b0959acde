// The rules a sandbox's processes follow whichever side runs them: this Node process
// (NativeLocalSandbox) or a supervisor (`persistent: true`). Each rule runs on both backends with
// real processes, and each expects the same outcome on both: an aborted wait, stdin's order, end
// and backlog, retention, spawns racing stop(), a command's timeout and the sandbox's lifetime,
// the table of exited processes, and a working directory that is gone.
import { it } from 'node:test'
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import * as fs from 'node:fs'
import * as path from 'node:path'
import { createRequire } from 'node:module'
import { ProcessAbortedError, ProcessAlreadyExitedError, ProcessStdinBacklogError } from 'procvisor'
import { describeBackends, perTest } from './backends.mjs'
import { alive, eventually, freePort, rejection } from './helpers.mjs'
import { processesWith } from './persistent-common.mjs'

const { MAX_EXITED } = createRequire(import.meta.url)('../../lib/process/mastra-rules.js')
const MiB = 1024 * 1024

describeBackends('the rules both backends share', ['native', 'persistent'], { timeout: 60_000 }, (backend) => {
  const t = perTest(backend, { prefix: 'procvisor-rules-', defaults: () => ({ env: { PATH: process.env.PATH } }) })

  /** Each of a nativeHandle's waits, on a process that never satisfies it. */
  const waits = {
    waitForLog: (h, signal) => h.nativeHandle.waitForLog('never printed', { signal }),
    waitForExit: (h, signal) => h.nativeHandle.waitForExit({ signal }),
    waitForPort: async (h, signal) => h.nativeHandle.waitForPort(await freePort(), { signal }),
  }

  /** Aborts each wait once it is under way; resolves with [name, error, the reason given]. */
  async function abortEach(sb) {
    const out = []
    for (const [name, wait] of Object.entries(waits)) {
      const h = await sb.processes.spawn('echo started; sleep 30')
      await h.nativeHandle.waitForLog('started', { timeout: 10_000 })
      const controller = new AbortController()
      const reason = new Error(`stop waiting (${name})`)
      const waiting = rejection(wait(h, controller.signal))
      // Under way: the wait has been made and has not settled by itself.
      await new Promise((r) => setTimeout(r, 50))
      controller.abort(reason)
      out.push([name, await waiting, reason, h])
    }
    return out
  }

  it('an aborted wait rejects with ProcessAbortedError and the process keeps running', async () => {
    const sb = await t.start()
    for (const [name, err, , h] of await abortEach(sb)) {
      assert.ok(err instanceof ProcessAbortedError, `${name}: ${err}`)
      assert.equal(err.code, 'PROCESS_ABORTED', name)
      assert.ok(alive(Number(h.pid)), `${name}: the process runs on`)
    }
  })

  it("an aborted wait's error has the signal's reason as its cause", async () => {
    const sb = await t.start()
    for (const [name, err, reason] of await abortEach(sb)) assert.equal(err.cause, reason, `${name}: ${err.message}`)
  })

  it('writes made without awaiting arrive in order, and the EOF after them', async () => {
    const sb = await t.start()
    const h = await sb.processes.spawn('cat > got; wc -c < got')
    // The first write is larger than a pipe holds: the second must wait for it, and the EOF for both.
    const a = 'a'.repeat(2 * MiB) + '\n'
    const b = 'b'.repeat(1000) + '\n'
    const sent = [h.sendStdin(a), h.sendStdin(b), h.closeStdin()]
    await Promise.all(sent)
    const r = await h.wait()
    assert.equal(r.exitCode, 0, r.stderr)
    assert.equal(r.stdout.trim(), String(a.length + b.length))
    assert.equal(fs.readFileSync(path.join(sb.workingDirectory, 'got'), 'utf8'), a + b)
  })

  it('sendStdin and closeStdin after the exit reject with ProcessAlreadyExitedError naming the exit code', async () => {
    const sb = await t.start()
    const h = await sb.processes.spawn('exit 3')
    assert.equal((await h.wait()).exitCode, 3)
    for (const call of [() => h.sendStdin('late'), () => h.closeStdin()]) {
      const err = await rejection(call())
      assert.ok(err instanceof ProcessAlreadyExitedError, String(err))
      assert.equal(err.code, 'PROCESS_ALREADY_EXITED')
      assert.equal(err.message, `Process ${h.pid} has already exited with code 3`)
    }
  })

  it('a write past the 16 MiB backlog to a process that reads nothing is refused with PROCESS_STDIN_BACKLOG_FULL', async () => {
    const sb = await t.start()
    const h = await sb.processes.spawn('sleep 30')
    const first = h.sendStdin(Buffer.alloc(10 * MiB, 0x61)).then(() => 'written', (e) => e)
    const err = await rejection(h.sendStdin(Buffer.alloc(10 * MiB, 0x62)))
    assert.ok(err instanceof ProcessStdinBacklogError, String(err))
    assert.equal(err.code, 'PROCESS_STDIN_BACKLOG_FULL')
    assert.match(err.message, /nothing of this write was sent/)
    await h.kill()
    const earlier = await first
    assert.ok(earlier === 'written' || /PROCESS_(ALREADY_EXITED|STDIN_WRITE_FAILED)/.test(earlier.code), String(earlier))
  })

  it('maxRetainedBytes: a small limit keeps the newest bytes and counts the dropped ones; Infinity keeps all', async () => {
    const sb = await t.start()
    const small = await sb.processes.spawn('printf 0123456789abcdefghij; printf ERR-0123456789 >&2', { maxRetainedBytes: 10 })
    const r = await small.wait()
    assert.deepEqual(
      [r.stdout, r.stdoutTruncated, r.stdoutDroppedBytes, r.stderr, r.stderrTruncated, r.stderrDroppedBytes],
      ['abcdefghij', true, 10, '0123456789', true, 4],
    )
    assert.equal(small.stdout, 'abcdefghij')
    const all = await sb.processes.spawn('seq 1 400000', { maxRetainedBytes: Infinity })
    const whole = await all.wait()
    const want = Array.from({ length: 400000 }, (_, i) => `${i + 1}\n`).join('')
    assert.ok(want.length > 2 * MiB)
    assert.equal(whole.stdout.length, want.length)
    assert.equal(whole.stdout, want)
    assert.equal(whole.stdoutDroppedBytes ?? 0, 0)
  })

  it('a bad maxRetainedBytes is a RangeError before anything runs', async () => {
    const sb = await t.start()
    const marker = path.join(t.dir, 'ran')
    for (const bad of [-1, 1.5, NaN, '10']) {
      const err = await rejection(sb.processes.spawn(`touch ${marker}`, { maxRetainedBytes: bad }))
      assert.ok(err instanceof RangeError, `${String(bad)}: ${err}`)
    }
    assert.equal(fs.existsSync(marker), false)
    assert.deepEqual(await sb.processes.list(), [])
  })

  it('twenty spawns in flight, then stop(): no process is left alive', async () => {
    const sb = await t.start()
    // A duration no other process uses, to find every one of them by its command line.
    const needle = `29.${randomBytes(4).readUInt32BE(0)}`
    const spawns = Array.from({ length: 20 }, () => sb.processes.spawn(`sleep ${needle}`).then((h) => h, (e) => e))
    // Past the sandbox's own checks, into the launch: a spawn that has not reached them yet
    // starts the stopped sandbox again, as Mastra's spawn does.
    await new Promise((r) => setImmediate(r))
    await sb.stop()
    const settled = await Promise.all(spawns)
    for (const s of settled) {
      if (s instanceof Error) assert.ok(typeof s.code === 'string', `an untyped error: ${s.stack}`)
      else assert.equal(alive(Number(s.pid)), false, `pid ${s.pid} survived stop()`)
    }
    assert.deepEqual(processesWith(needle), [], 'a process of the twenty outlived stop()')
  })

  it("a spawn's timeout ends it with 124 and the same note on stderr", async () => {
    const sb = await t.start()
    const h = await sb.processes.spawn('echo err >&2; sleep 5', { timeout: 200 })
    const r = await h.wait()
    assert.deepEqual([r.exitCode, r.timedOut, r.killed, r.stderr], [124, true, true, 'err\n\nProcess timed out after 200ms'])
  })

  it("the sandbox's lifetime ends a running command with 124 and a note that names it", async () => {
    const sb = await t.start({ timeoutMs: 1500 })
    const h = await sb.processes.spawn('echo err >&2; sleep 30')
    const r = await h.wait()
    assert.deepEqual(
      [r.exitCode, r.timedOut, r.killed, r.stderr],
      [124, true, true, "err\n\nProcess killed: the sandbox's lifetime (timeoutMs) of 1500 ms ended"],
    )
  })

  it("the sandbox's status is 'stopped' once its lifetime ended", async () => {
    const sb = await t.start({ timeoutMs: 1000 })
    const h = await sb.processes.spawn('sleep 30')
    assert.equal((await h.wait()).exitCode, 124)
    assert.ok(await eventually(() => sb.status === 'stopped', 5000), `status is ${sb.status}`)
  })

  it(`more exited processes than the cap (${MAX_EXITED}) leave list() at the cap, the oldest forgotten`, async () => {
    const sb = await t.start()
    const pids = []
    for (let batch = 0; batch < (MAX_EXITED + 20) / 50; batch++) {
      const hs = await Promise.all(Array.from({ length: 50 }, () => sb.processes.spawn('true')))
      for (const h of hs) await h.wait()
      pids.push(...hs.map((h) => h.pid))
    }
    const listed = await sb.processes.list()
    assert.equal(listed.length, MAX_EXITED)
    assert.ok(listed.every((p) => p.running === false && p.exitCode === 0))
    assert.deepEqual(new Set(listed.map((p) => p.pid)), new Set(pids.slice(-MAX_EXITED)))
  })

  it('a working directory removed after start() makes a spawn fail with INVALID_PROCESS_CWD', async () => {
    const sb = await t.start()
    const marker = path.join(t.dir, 'ran')
    fs.rmSync(sb.workingDirectory, { recursive: true })
    for (const options of [{}, { cwd: 'sub' }]) {
      const err = await rejection(sb.processes.spawn(`touch ${marker}`, options))
      assert.equal(err.code, 'INVALID_PROCESS_CWD', `${JSON.stringify(options)}: ${err.stack}`)
      assert.equal(err.name, 'InvalidProcessCwdError')
    }
    assert.equal(fs.existsSync(marker), false)
  })
})
