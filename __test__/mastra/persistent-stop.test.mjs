// Stopping a persistent sandbox: after stop() resolves, no process of it is alive, whatever was
// under way when it was called.
import { afterEach, beforeEach, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import * as fs from 'node:fs'
import * as path from 'node:path'
import { spawn, spawnSync } from 'node:child_process'
import { alive, eventually, tempDir } from './helpers.mjs'
import { freshId, processesWith, sweep } from './persistent-common.mjs'
import { sandboxMaker } from './backends.mjs'

let tmp
let made = []

beforeEach(() => {
  tmp = tempDir('procvisor-persistent-stop-')
})

afterEach(async () => {
  for (const sb of made.splice(0)) await sweep(sb.id)
  fs.rmSync(tmp, { recursive: true, force: true })
})

const make = sandboxMaker(made, () => ({ id: freshId(), workingDirectory: path.join(tmp, 'wd'), persistent: true, timeoutMs: 60000 }))

describe('stopping a persistent sandbox', () => {
  it('stop() with 20 spawns in flight waits for them and kills them too', async () => {
    const sb = make()
    await sb.start()
    const supervisor = sb.supervisorPid
    // A mark on every process of this test: the shells' command lines and the sleeps' arguments.
    const mark = `299.${randomBytes(3).readUIntBE(0, 3)}`
    const spawns = Array.from({ length: 20 }, () => sb.processes.spawn(`sleep ${mark}; :`))
    const settled = Promise.allSettled(spawns)
    // Mastra's lifecycle entry (what a Workspace calls), which runs stop() and reports the status.
    await sb._stop()
    assert.equal(sb.status, 'stopped')
    const living = processesWith(mark)
    assert.deepEqual(living, [], `${living.length} processes of the sandbox alive after stop()`)
    // Every launch was answered before the stop was: each spawn settled, none waits on a closed connection.
    const launched = (await settled).filter((r) => r.status === 'fulfilled').map((r) => Number(r.value.pid))
    assert.deepEqual(launched.filter(alive), [])
    assert.equal(await eventually(() => !alive(supervisor), 5000), true)
  })

  it('the end of the lifetime reports the processes it killed as a local sandbox does: 124, timedOut, a note on stderr', async () => {
    const sb = make({ timeoutMs: 1500 })
    await sb.start()
    const long = await sb.processes.spawn('echo started; sleep 300')
    const early = await sb.processes.spawn('exit 3')
    const killed = await sb.processes.spawn('sleep 300')
    assert.equal((await early.wait()).exitCode, 3)
    await sb.processes.kill(killed.pid)
    const result = await long.wait()
    assert.equal(result.exitCode, 124)
    assert.equal(result.success, false)
    assert.equal(result.timedOut, true)
    assert.equal(result.killed, true)
    assert.equal(result.stdout, 'started\n')
    assert.equal(result.stderr, "\nProcess killed: the sandbox's lifetime (timeoutMs) of 1500 ms ended")
    assert.equal(long.stderr, result.stderr, 'the note is part of the stream, as Mastra\'s timeout note is')
    // A process that ended before the lifetime keeps its own result: a kill is still a kill.
    const own = await killed.wait()
    assert.deepEqual([own.exitCode, own.killed, own.timedOut ?? false], [128, true, false])
    assert.equal(own.stderr, '')
  })

  // A debugger attached to a process and stopped there: once the process is killed, the kernel
  // lets its parent reap it only after the debugger has. The sandbox ends without it.
  const tracer = `
import ctypes, os, signal, sys
libc = ctypes.CDLL(None, use_errno=True)
if libc.ptrace(0x4206, int(sys.argv[1]), None, None) != 0:  # PTRACE_SEIZE
    sys.exit('ptrace: errno %d' % ctypes.get_errno())
print('seized', flush=True)
os.kill(os.getpid(), signal.SIGSTOP)
`
  const python = spawnSync('python3', ['-c', 'print(1)']).status === 0
  it('stop() ends a sandbox whose process a stopped debugger holds, within its bounds', { skip: python ? false : 'python3 is not installed (the test traces a process with it)', timeout: 60_000 }, async () => {
    const sb = make()
    await sb.start()
    const supervisor = sb.supervisorPid
    const held = await sb.processes.spawn('exec sleep 300')
    const debuggerProcess = spawn('python3', ['-c', tracer, held.pid], { stdio: ['ignore', 'pipe', 'pipe'] })
    try {
      const said = await new Promise((resolve) => {
        debuggerProcess.stdout.once('data', (d) => resolve(String(d)))
        debuggerProcess.on('exit', (code) => resolve(`exited ${code}`))
      })
      assert.equal(said.trim(), 'seized')
      const state = () => fs.readFileSync(`/proc/${debuggerProcess.pid}/stat`, 'utf8').split(') ')[1][0]
      assert.equal(await eventually(() => state() === 'T', 5000), true, 'the debugger stopped')
      const started = Date.now()
      await sb.stop()
      // The manager's close waits 10 s for an end, the supervisor 2 s more to tell its clients.
      const took = Date.now() - started
      assert.ok(took < 30_000, `stop() took ${took} ms`)
      assert.equal(await eventually(() => !alive(supervisor), 5000), true, 'the supervisor ended')
    } finally {
      debuggerProcess.kill('SIGKILL')
    }
    // With the debugger gone the killed process is reaped.
    assert.equal(await eventually(() => !alive(Number(held.pid)), 5000), true)
  })
})
