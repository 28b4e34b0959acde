// The execute_command background flow on NativeLocalSandbox, on both procvisor backends: first as
// the tools call sandbox.processes (spawn with stdinMode 'ignore' and callbacks, get(pid),
// kill(pid)), then through Mastra's real workspace tools (execute_command, get_process_output,
// kill_process).
import { beforeEach, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { Workspace, WORKSPACE_TOOLS, createWorkspaceTools } from '@mastra/core/workspace'
import { describeBackends, perTest } from './backends.mjs'
import { alive, collector, eventually } from './helpers.mjs'

describeBackends('the background flow', ['native', 'persistent'], { timeout: 30000 }, (backend) => {
  const t = perTest(backend, { prefix: 'procvisor-tools-', defaults: (dir) => ({ workingDirectory: dir, env: { PATH: process.env.PATH } }) })
  let dir
  let sandbox
  beforeEach(async () => {
    sandbox = await t.start()
    dir = t.dir
  })

  describe('execute_command background flow through sandbox.processes', () => {
    it("spawn (stdinMode 'ignore', callbacks) → get(pid) output → kill(pid)", async () => {
      const out = collector(/tick-3/)
      const errs = []
      const handle = await sandbox.processes.spawn(
        'i=0; while true; do i=$((i+1)); echo tick-$i; echo warn-$i >&2; sleep 0.05; done',
        { cwd: dir, timeout: 30000, stdinMode: 'ignore', onStdout: out.onData, onStderr: (d) => errs.push(d) },
      )
      const pid = handle.pid
      assert.match(pid, /^\d+$/)
      await out.matched

      // get_process_output: the handle, its command and the output so far; still running.
      const running = await sandbox.processes.get(pid)
      assert.equal(running, handle)
      assert.equal(running.command, 'i=0; while true; do i=$((i+1)); echo tick-$i; echo warn-$i >&2; sleep 0.05; done')
      assert.equal(running.exitCode, undefined)
      assert.match(running.stdout, /^tick-1\ntick-2\ntick-3\n/)
      assert.ok(await eventually(() => errs.join('').includes('warn-3')))
      assert.match(running.stderr, /^warn-1\n/)
      await assert.rejects(running.sendStdin('x'), /stdin/)

      // get_process_output with wait: true and an abortSignal that fires.
      const controller = new AbortController()
      const waited = []
      setTimeout(() => controller.abort(), 120)
      const aborted = await running.wait({ abortSignal: controller.signal, onStdout: (d) => waited.push(d) })
      assert.equal(aborted.exitCode, 128)
      assert.equal(aborted.killed, true)
      assert.ok(waited.join('').includes('tick-'), 'the wait listener saw output while waiting')

      // kill_process after the abort: get() after exit returns the handle once; kill(pid) is false.
      const exited = await sandbox.processes.get(pid)
      assert.equal(exited, handle)
      assert.equal(await sandbox.processes.get(pid), undefined)
      assert.equal(await sandbox.processes.kill(pid), false)
      assert.equal(alive(Number(pid)), false)
    })

    it('kill(pid) on a running background process kills it, waits, and releases it', async () => {
      const out = collector(/started/)
      const handle = await sandbox.processes.spawn('echo started; sleep 30', { stdinMode: 'ignore', onStdout: out.onData })
      await out.matched
      assert.deepEqual((await sandbox.processes.list()).find((p) => p.pid === handle.pid), { pid: handle.pid, command: 'echo started; sleep 30', running: true })
      assert.equal(await sandbox.processes.kill(handle.pid), true)
      assert.equal(handle.exitCode, 128) // kill() awaited the exit
      assert.equal(handle.stdout, 'started\n')
      assert.equal(await sandbox.processes.get(handle.pid), undefined)
      assert.equal((await sandbox.processes.list()).find((p) => p.pid === handle.pid), undefined)
      assert.equal(alive(Number(handle.pid)), false)
    })

    it('an onExit-style wait().then() sees the final result of a background process', async () => {
      const exits = []
      const handle = await sandbox.processes.spawn('echo bye; exit 7', { stdinMode: 'ignore' })
      await handle.wait().then((r) => exits.push(r))
      assert.equal(exits.length, 1)
      assert.equal(exits[0].exitCode, 7)
      assert.equal(exits[0].stdout, 'bye\n')
      assert.equal(exits[0].success, false)
      assert.equal(await sandbox.processes.get(handle.pid), handle) // read once after exit: pruned
      assert.deepEqual(await sandbox.processes.list(), [])
    })
  })

  describe("Mastra's workspace tools on NativeLocalSandbox", () => {
    it('execute_command (foreground and background), get_process_output, kill_process', async () => {
      const workspace = new Workspace({ sandbox })
      await workspace.init()
      const tools = await createWorkspaceTools(workspace)
      const exec = tools[WORKSPACE_TOOLS.SANDBOX.EXECUTE_COMMAND]
      const getOutput = tools[WORKSPACE_TOOLS.SANDBOX.GET_PROCESS_OUTPUT]
      const killProcess = tools[WORKSPACE_TOOLS.SANDBOX.KILL_PROCESS]
      assert.ok(exec && getOutput && killProcess)
      const ctx = { workspace }

      const fg = await exec.execute({ command: 'echo fg-out; echo fg-err >&2; exit 3' }, ctx)
      assert.match(String(fg), /fg-out/)
      assert.match(String(fg), /fg-err/)
      assert.match(String(fg), /Exit code: 3/)
      assert.deepEqual(await sandbox.processes.list(), [])

      const bg = await exec.execute({ command: 'for i in 1 2 3; do echo bg-$i; done; sleep 30', background: true }, ctx)
      const pid = /PID: (\d+)/.exec(String(bg))?.[1]
      assert.ok(pid, String(bg))
      assert.ok(alive(Number(pid)))
      const handle = await sandbox.processes.get(pid)
      assert.ok(await eventually(() => handle.stdout.includes('bg-3')))

      const output = await getOutput.execute({ pid }, ctx)
      assert.match(String(output), /bg-1\nbg-2\nbg-3/)

      const killed = await killProcess.execute({ pid }, ctx)
      assert.match(String(killed), new RegExp(`Process ${pid} has been killed`))
      assert.match(String(killed), /bg-3/)
      assert.deepEqual(await sandbox.processes.list(), [])
      assert.ok(await eventually(() => !alive(Number(pid)), 1000))
    })
  })
})
