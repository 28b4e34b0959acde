// A Mastra application: a Workspace whose sandbox is procvisor's NativeLocalSandbox, driven through
// Mastra's real workspace tools (execute_command in the background, get_process_output,
// kill_process), as an agent would call them.
import * as fs from 'node:fs'
import * as os from 'node:os'
import * as path from 'node:path'
import { createRequire } from 'node:module'
import { fileURLToPath } from 'node:url'
import { Workspace, WORKSPACE_TOOLS, createWorkspaceTools, LocalSandbox } from '@mastra/core/workspace'
import { NativeLocalSandbox, NativeProcessManager } from 'procvisor/mastra'

const require = createRequire(import.meta.url)
const { check, finish, alive, eventually, assertProvenance, ROOT, assert } = require('./check.cjs')

const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'procvisor-mastra-ws-')))
const sandbox = new NativeLocalSandbox({ workingDirectory: dir, env: { PATH: process.env.PATH } })
const workspace = new Workspace({ sandbox })
let tools

await check('NativeLocalSandbox is a LocalSandbox of the installed @mastra/core, backed by procvisor', async () => {
  assert.ok(sandbox instanceof LocalSandbox)
  assert.ok(sandbox.processes instanceof NativeProcessManager)
  assert.equal(fileURLToPath(import.meta.resolve('@mastra/core/workspace')).startsWith(path.join(ROOT, 'node_modules/@mastra/core/')), true)
  await workspace.init()
  tools = await createWorkspaceTools(workspace)
  for (const name of ['EXECUTE_COMMAND', 'GET_PROCESS_OUTPUT', 'KILL_PROCESS']) assert.ok(tools[WORKSPACE_TOOLS.SANDBOX[name]], name)
})

if (tools) {
  const ctx = { workspace }
  const exec = tools[WORKSPACE_TOOLS.SANDBOX.EXECUTE_COMMAND]
  const getOutput = tools[WORKSPACE_TOOLS.SANDBOX.GET_PROCESS_OUTPUT]
  const killProcess = tools[WORKSPACE_TOOLS.SANDBOX.KILL_PROCESS]
  let pid

  await check('execute_command (foreground): output and exit code', async () => {
    const fg = String(await exec.execute({ command: 'echo fg-out; echo fg-err >&2; exit 3' }, ctx))
    assert.match(fg, /fg-out/)
    assert.match(fg, /fg-err/)
    assert.match(fg, /Exit code: 3/)
  })

  await check('execute_command with background: true starts a running process', async () => {
    const bg = String(await exec.execute({ command: 'for i in 1 2 3; do echo bg-$i; done; sleep 30', background: true }, ctx))
    pid = /PID: (\d+)/.exec(bg)?.[1]
    assert.ok(pid, bg)
    assert.ok(alive(Number(pid)), 'the background process runs')
    const handle = await sandbox.processes.get(pid)
    assert.ok(await eventually(() => handle.stdout.includes('bg-3')), 'its output arrives')
  })

  await check('get_process_output returns its output', async () => {
    assert.ok(pid)
    assert.match(String(await getOutput.execute({ pid }, ctx)), /bg-1\nbg-2\nbg-3/)
  })

  await check('kill_process kills it and the process is gone', async () => {
    assert.ok(pid)
    const killed = String(await killProcess.execute({ pid }, ctx))
    assert.match(killed, new RegExp(`Process ${pid} has been killed`))
    assert.deepEqual(await sandbox.processes.list(), [])
    assert.ok(await eventually(() => !alive(Number(pid))), 'not alive after kill_process')
  })

  await check('procvisor and its addon come from this project, none from the checkout', () => {
    assertProvenance({ resolved: [fileURLToPath(import.meta.resolve('procvisor/mastra'))] })
  })
}

await check('a persistent sandbox runs its supervisor from the installed package, and a second object reconnects to it', async () => {
  const id = `install-check-${process.pid}`
  const wd = path.join(dir, 'persistent')
  const first = new NativeLocalSandbox({ id, workingDirectory: wd, persistent: true, timeoutMs: 60_000 })
  assert.deepEqual(await first.start(), { outcome: 'created' })
  assert.equal(first.supervisor, 'started')
  const p = await first.processes.spawn('echo from-the-supervisor; sleep 30')
  await first.detach()
  const second = new NativeLocalSandbox({ id, workingDirectory: wd, persistent: true })
  assert.deepEqual(await second.start(), { outcome: 'connected' })
  assert.equal(second.supervisor, 'joined')
  const again = await second.processes.get(p.pid)
  assert.ok(await eventually(() => again.stdout.includes('from-the-supervisor')), again.stdout)
  const supervisor = second.supervisorPid
  // Its script is the last argument (Node's options come before it).
  const cmdline = fs.readFileSync(`/proc/${supervisor}/cmdline`, 'utf8').split('\0')
  assertProvenance({ resolved: [cmdline[cmdline.length - 2]] })
  await second._stop()
  assert.ok(await eventually(() => !alive(Number(p.pid)) && !alive(supervisor)), 'stop() ended the supervisor and its process')
})

await workspace.destroy?.().catch(() => {})
fs.rmSync(dir, { recursive: true, force: true })
finish()
