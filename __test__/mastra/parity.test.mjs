// Drop-in parity: the same scenarios run on Mastra's own LocalSandbox (execa), on
// NativeLocalSandbox and on a persistent NativeLocalSandbox (its processes under a supervisor),
// and must give the same observable results (timings aside).
import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import * as fs from 'node:fs/promises'
import * as path from 'node:path'
import { tempDir } from './helpers.mjs'
import { BACKENDS, end, holdLoop } from './backends.mjs'

const sandboxes = {}
let release
before(async () => {
  release = holdLoop()
  for (const backend of BACKENDS) {
    const dir = tempDir(`procvisor-parity-${backend.name}-`)
    await fs.mkdir(path.join(dir, 'sub'))
    const sb = backend.make({ workingDirectory: dir, env: { PATH: process.env.PATH, BASE: 'base' } })
    await sb._start()
    sandboxes[backend.name] = sb
  }
})
after(async () => {
  for (const sb of Object.values(sandboxes)) {
    await end(sb)
    await fs.rm(sb.workingDirectory, { recursive: true, force: true })
  }
  release()
})

/** Drops what legitimately differs between two runs: timings, pids, the working directory. */
function normalize(value, sb) {
  if (Array.isArray(value)) return value.map((v) => normalize(v, sb))
  if (value && typeof value === 'object') {
    const out = {}
    for (const [k, v] of Object.entries(value)) if (k !== 'executionTimeMs') out[k] = normalize(v, sb)
    return out
  }
  if (typeof value === 'string') return value.split(sb.workingDirectory).join('<wd>').replace(/Process \d+/g, 'Process <pid>')
  return value
}

async function outcome(promise) {
  try {
    return { value: await promise }
  } catch (err) {
    return { error: err.message }
  }
}

/** The scenario on Mastra's sandbox, then on each of ours: each gives Mastra's result. */
function same(title, scenario) {
  it(title, async () => {
    const mastra = normalize(await scenario(sandboxes.mastra), sandboxes.mastra)
    for (const { name, title: which } of BACKENDS.filter((b) => !b.mastra)) {
      assert.deepEqual(normalize(await scenario(sandboxes[name]), sandboxes[name]), mastra, which)
    }
  })
}

describe('NativeLocalSandbox, local and persistent, gives the same results as Mastra’s LocalSandbox', { timeout: 20000 }, () => {
  same('executeCommand: quoted args, full result object', (sb) => sb.executeCommand('printf', ['%s|', 'a b', "it's", '$HOME']))
  same('executeCommand: non-zero exit with stderr', (sb) => sb.executeCommand('sh', ['-c', 'echo out; echo err >&2; exit 3']))
  same('executeCommand: missing command → 127, "not found"', (sb) => sb.executeCommand('nonexistent-command-xyz-12345'))
  same('executeCommand: timeout → 124, timedOut, killed, stderr note', (sb) => sb.executeCommand('sleep 5', [], { timeout: 150 }))
  same('executeCommand: a process killed by a signal → 128', (sb) => sb.executeCommand('kill -9 $$'))
  same('executeCommand: env layering and no other process.env', async (sb) => {
    process.env.PROCVISOR_PARITY_MARKER = 'leak'
    try {
      const r = await sb.executeCommand('env', [], { env: { CALL: 'call' } })
      return r.stdout.split('\n').sort()
    } finally {
      delete process.env.PROCVISOR_PARITY_MARKER
    }
  })
  same('executeCommand: setEnv overlay under the per-call env', async (sb) => {
    sb.setEnv((e) => ({ ...e, OVERLAY: 'o', BASE: 'from-overlay' }))
    const a = await sb.executeCommand('sh', ['-c', 'echo $BASE $OVERLAY $CALL'])
    const b = await sb.executeCommand('sh', ['-c', 'echo $BASE $OVERLAY $CALL'], { env: { OVERLAY: 'call-wins', CALL: 'c' } })
    sb.setEnv((e) => ({ ...e, OVERLAY: undefined, BASE: 'base' }))
    return [a.stdout, b.stdout]
  })
  same('executeCommand: relative and absolute cwd', async (sb) => [
    (await sb.executeCommand('pwd', [], { cwd: 'sub' })).stdout,
    (await sb.executeCommand('pwd', [], { cwd: './sub' })).stdout,
    (await sb.executeCommand('pwd', [], { cwd: '.' })).stdout,
    (await sb.executeCommand('pwd', [], { cwd: '/tmp' })).stdout,
  ])
  same('executeCommand: a missing cwd rejects with ENOENT/cwd, nothing tracked', async (sb) => {
    const r = await outcome(sb.executeCommand('pwd', [], { cwd: '/nonexistent/x' }))
    return [/ENOENT|no such file or directory|cwd/i.test(r.error), await sb.processes.list()]
  })
  same('executeCommand: the split UTF-8 character', (sb) =>
    sb.executeCommand('node', ['-e', 'const b=Buffer.from([0xf0,0x9f,0x99,0x82]);process.stdout.write(b.subarray(0,2));setTimeout(()=>process.stdout.write(b.subarray(2)),10)']),
  )
  same('executeCommand: maxRetainedBytes trims on code point boundaries', (sb) =>
    sb.executeCommand('printf', ['aé🙂b€c'], { maxRetainedBytes: 6 }),
  )
  same('executeCommand: list() is empty afterwards', async (sb) => {
    await sb.executeCommand('echo', ['x'])
    return sb.processes.list()
  })

  same('spawn: default retention is 1 MiB', async (sb) => {
    const r = await (await sb.processes.spawn("head -c 1500000 /dev/zero | tr '\\0' a")).wait()
    return { length: r.stdout.length, stdoutTruncated: r.stdoutTruncated, stdoutDroppedBytes: r.stdoutDroppedBytes, exitCode: r.exitCode }
  })
  same('spawn: maxRetainedBytes 0 keeps nothing, listeners still get everything', async (sb) => {
    const seen = []
    const h = await sb.processes.spawn('echo one; echo two', { maxRetainedBytes: 0, onStdout: (d) => seen.push(d) })
    const r = await h.wait()
    return [r, seen.join('')]
  })
  same('spawn: handle state, idempotent wait, kill after exit', async (sb) => {
    const h = await sb.processes.spawn('sleep 0.1; echo done')
    const before = h.exitCode
    const r1 = await h.wait()
    const r2 = await h.wait()
    return { before, r1, same: JSON.stringify(r1) === JSON.stringify(r2), after: h.exitCode, kill: await h.kill(), command: h.command }
  })
  same('spawn: handle.kill() → true, 128, killed', async (sb) => {
    const h = await sb.processes.spawn('sleep 30')
    const killed = await h.kill()
    return [killed, await h.wait(), await h.kill()]
  })
  same('spawn: stdin — sendStdin, closeStdin twice, errors after exit', async (sb) => {
    const h = await sb.processes.spawn('cat; sleep 0.2')
    await h.sendStdin('abc\n')
    await h.closeStdin()
    await h.closeStdin()
    const r = await h.wait()
    return [r, await outcome(h.sendStdin('x')), await outcome(h.closeStdin())]
  })
  same("spawn: stdinMode 'ignore' — sendStdin rejects", async (sb) => {
    const h = await sb.processes.spawn('sleep 5', { stdinMode: 'ignore' })
    const r = await outcome(h.sendStdin('x'))
    await h.kill()
    await h.wait()
    return r
  })
  same('spawn: a bad maxRetainedBytes is a RangeError', async (sb) => {
    const r = await sb.processes.spawn('true', { maxRetainedBytes: -1 }).catch((e) => e)
    return [r instanceof RangeError, r.message]
  })
  // (list() entries compared without pid and command: procvisor also reports the command.)
  same('manager: get prunes after exit, kill and release untrack, unknown pids', async (sb) => {
    const pm = sb.processes
    const a = await pm.spawn('echo a')
    await a.wait()
    const first = (await pm.get(a.pid)) === a
    const second = await pm.get(a.pid)
    const b = await pm.spawn('sleep 30')
    const killed = await pm.kill(b.pid)
    const afterKill = await pm.get(b.pid)
    const c = await pm.spawn('sleep 0.05')
    pm.release(c.pid)
    const afterRelease = await pm.get(c.pid)
    await c.wait()
    return { first, second, killed, exitAfterKill: b.exitCode, afterKill, afterRelease, unknownGet: await pm.get('99999'), unknownKill: await pm.kill('99999'), list: (await pm.list()).map(({ running, exitCode }) => ({ running, exitCode })) }
  })
  same('reader and writer streams', async (sb) => {
    const h = await sb.processes.spawn('head -2')
    const chunks = []
    h.reader.on('data', (d) => chunks.push(String(d)))
    const ended = new Promise((r) => h.reader.on('end', r))
    await new Promise((res, rej) => h.writer.write('one\ntwo\nthree\n', (e) => (e ? rej(e) : res())))
    const r = await h.wait()
    await ended
    return [r, chunks.join('')]
  })
})
