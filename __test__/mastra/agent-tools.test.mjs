// createProcessTools driven by a real Mastra Agent: a scripted model calls the tools, and
// Mastra's own agent loop validates the calls against the zod schemas and runs them. On both
// procvisor backends; on a persistent one, an agent in a later Node process picks up the terminal.
import { it } from 'node:test'
import assert from 'node:assert/strict'
import * as fs from 'node:fs'
import * as path from 'node:path'
import { Agent } from '@mastra/core/agent'
import { Workspace, WORKSPACE_TOOLS_PREFIX } from '@mastra/core/workspace'
import { createProcessTools } from 'procvisor/mastra'
import { ROOT, alive, eventually, freePort } from './helpers.mjs'
import { scriptedModel } from './scripted-model.mjs'
import { describeBackends, perTest, startedElsewhere } from './backends.mjs'

const T = (name) => `${WORKSPACE_TOOLS_PREFIX}_${name}`
const pidOf = (result) => /PID: (\d+)/.exec(result.value)[1]

/** Runs `steps` through an Agent with the workspace's tools and the process tools; the model's view of the results. */
async function run(workspace, steps) {
  const model = scriptedModel(steps)
  const agent = new Agent({ id: 'ops', name: 'ops', instructions: 'Run what you are asked to.', model, workspace, tools: createProcessTools(workspace, { quietMs: 200 }) })
  const r = await agent.generate('go', { maxSteps: steps.length + 1 })
  return { text: r.text, results: model.results }
}

const ENV = () => ({ env: { PATH: process.env.PATH, PS1: 'agent$ ' } })

/** A Workspace, initialised, over a sandbox of `each` (made with `options`) that ends after the test. */
async function workspaceOf(each, options) {
  const workspace = new Workspace({ sandbox: each.make(options) })
  await workspace.init()
  return workspace
}

describeBackends('an agent with the process tools', ['native', 'persistent'], { timeout: 60000 }, (backend) => {
  const each = perTest(backend, { prefix: 'procvisor-agent-tools-', defaults: ENV })

  it('starts a server in the background, waits for its port, reads its log in two pieces, kills it', async () => {
    const workspace = await workspaceOf(each)
    const port = await freePort()
    // Forty numbered lines, written one at a time, then the server listens.
    const server = `let i=0;const t=setInterval(()=>{console.log('line-'+String(++i).padStart(4,'0')+' '+'x'.repeat(40));if(i===40){clearInterval(t);require('http').createServer((q,s)=>s.end('ok')).listen(${port},()=>console.log('listening'))}},2)`
    fs.writeFileSync(path.join(workspace.sandbox.workingDirectory, 'server.js'), server)
    let pid
    const { results, text } = await run(workspace, [
      () => ({ tool: T('execute_command'), input: { command: 'node server.js', background: true } }),
      ({ last }) => ((pid = pidOf(last)), { tool: T('wait_for_port'), input: { pid, port, mode: 'http', timeoutMs: 20000 } }),
      () => ({ tool: T('wait_for_log'), input: { pid, pattern: '/^listening$/m' } }),
      () => ({ tool: T('read_logs'), input: { pid, maxBytes: 1024 } }),
      ({ last }) => ({ tool: T('read_logs'), input: { pid, since: last.value.cursor } }),
      () => ({ tool: T('list_processes'), input: {} }),
      () => ({ tool: T('kill_process'), input: { pid } }),
      () => ({ text: 'done' }),
    ])
    assert.equal(text, 'done')
    const [, ready, logLine, first, second, listed, killed] = results
    assert.equal(ready.error, false, JSON.stringify(ready.value))
    assert.equal(ready.value.ready, true)
    assert.equal(typeof ready.value.ms, 'number')
    assert.deepEqual(logLine.value.line, 'listening')
    // Two reads: the first bounded and saying so, the second from its cursor, together the whole log once.
    assert.equal(first.value.truncated, true)
    assert.ok(first.value.text.length <= 1024)
    assert.match(first.value.note, /call again with since/)
    assert.equal(first.value.exited, false)
    assert.equal(second.value.truncated, false)
    const lines = Array.from({ length: 40 }, (_, i) => `line-${String(i + 1).padStart(4, '0')} ${'x'.repeat(40)}`)
    assert.equal(first.value.text + second.value.text, `${lines.join('\n')}\nlistening\n`)
    const entry = listed.value.processes.find((p) => p.pid === pid)
    assert.equal(entry.state, 'running')
    assert.equal(entry.command, 'node server.js')
    assert.match(entry.startedAt, /^\d{4}-\d\d-\d\dT/)
    assert.match(killed.value, /has been killed/)
    assert.ok(await eventually(() => !alive(Number(pid))))
  })

  it('a wait on a server that crashes returns its exit code and the end of its stderr', async () => {
    const workspace = await workspaceOf(each)
    const port = await freePort()
    const { results } = await run(workspace, [
      () => ({ tool: T('execute_command'), input: { command: `node -e "console.error('Error: listen EADDRINUSE :::${port}'); process.exit(3)"`, background: true } }),
      ({ last }) => ({ tool: T('wait_for_port'), input: { pid: pidOf(last), port } }),
      () => ({ text: 'done' }),
    ])
    const wait = results[1].value
    assert.equal(wait.ready, false)
    assert.equal(wait.exitCode, 3)
    assert.match(wait.stderrTail, new RegExp(`EADDRINUSE :::${port}`))
    assert.match(wait.message, /ended before port/)
  })

  it('failures reach the model as a sentence it can act on, never a stack', async () => {
    const workspace = await workspaceOf(each)
    const { results } = await run(workspace, [
      () => ({ tool: T('wait_for_log'), input: { pid: '999999999', pattern: 'x' } }),
      () => ({ tool: T('terminal_write'), input: { terminalId: 'nope', input: 'ls{Enter}' } }),
      () => ({ tool: T('read_logs'), input: { pid: 'abc' } }),
      () => ({ tool: T('wait_for_port'), input: { pid: '1', port: 'eighty' } }),
      () => ({ text: 'done' }),
    ])
    const [noPid, noTerminal, badPid, badPort] = results
    for (const r of [noPid, noTerminal, badPid]) {
      assert.equal(r.error, true, JSON.stringify(r))
      assert.doesNotMatch(String(r.value), /\n\s+at /)
    }
    // A call that does not fit the schema is answered by Mastra's own validation, before the tool runs.
    assert.equal(badPort.value.error, true)
    assert.match(noPid.value, /no process with pid 999999999 in this sandbox/)
    assert.match(noTerminal.value, /no terminal nope in this sandbox.*terminal_open/)
    assert.match(badPid.value, /no process named abc/)
    assert.match(badPort.value.message, /port: .*expected number/)
  })

  it('checkpoints the working directory, breaks it, rolls it back in place, and deletes the checkpoint', async () => {
    const workspace = await workspaceOf(each)
    const wd = workspace.sandbox.workingDirectory
    fs.mkdirSync(path.join(wd, 'src'))
    fs.writeFileSync(path.join(wd, 'a.txt'), 'one\n')
    fs.writeFileSync(path.join(wd, 'src', 'b.txt'), 'two\n')
    const { results } = await run(workspace, [
      () => ({ tool: T('checkpoint_capture'), input: { name: 'before-refactor' } }),
      () => ({ tool: T('execute_command'), input: { command: 'echo broken > a.txt && rm src/b.txt && mkdir junk && echo x > junk/new.txt' } }),
      () => ({ tool: T('checkpoint_list'), input: {} }),
      () => ({ tool: T('checkpoint_restore'), input: { name: 'before-refactor' } }),
      () => ({ tool: T('checkpoint_restore'), input: { name: 'nope' } }),
      () => ({ tool: T('checkpoint_capture'), input: {} }),
      () => ({ tool: T('checkpoint_delete'), input: { name: 'before-refactor' } }),
      () => ({ tool: T('checkpoint_list'), input: {} }),
      () => ({ text: 'done' }),
    ])
    const [captured, , listed, restored, unknown, unnamed, deleted, after] = results
    assert.equal(captured.error, false, JSON.stringify(captured.value))
    assert.deepEqual([captured.value.name, captured.value.files, captured.value.bytes], ['before-refactor', 2, 8])
    assert.equal(captured.value.newBytes, 8, 'a first capture writes every byte')
    assert.equal(captured.value.skipped, undefined, 'nothing was left out, so nothing is said of it')
    assert.equal(new Date(captured.value.createdAt).toISOString(), captured.value.createdAt)
    assert.deepEqual(listed.value.checkpoints.map((c) => [c.name, c.files]), [['before-refactor', 2]])
    // a.txt changed and src/b.txt gone: both written back; junk/ (with its file) removed once.
    assert.deepEqual(restored.value, { name: 'before-refactor', files: 2, unchanged: 0, restored: 2, removed: 1, bytesWritten: 8 })
    assert.equal(fs.readFileSync(path.join(wd, 'a.txt'), 'utf8'), 'one\n')
    assert.equal(fs.readFileSync(path.join(wd, 'src', 'b.txt'), 'utf8'), 'two\n')
    assert.deepEqual(fs.readdirSync(wd).sort(), ['a.txt', 'src'])
    assert.equal(unknown.error, true)
    assert.doesNotMatch(String(unknown.value), /\n\s+at /)
    assert.match(unknown.value, /no checkpoint named "nope".*checkpoint_list lists the checkpoints there are/)
    // Unnamed: a name from the time; unchanged files shared with the last capture, nothing new written.
    assert.match(unnamed.value.name, /^\S+$/)
    assert.deepEqual([unnamed.value.files, unnamed.value.newBytes], [2, 0])
    assert.deepEqual(deleted.value, { name: 'before-refactor', deleted: true })
    assert.deepEqual(after.value.checkpoints.map((c) => c.name), [unnamed.value.name])
  })

  it('drives a shell on a terminal: types an expression and reads the answer; Ctrl-C stops a sleep and the shell lives on', async () => {
    const workspace = await workspaceOf(each)
    let id
    const { results } = await run(workspace, [
      () => ({ tool: T('terminal_open'), input: { command: 'sh -i' } }),
      ({ last }) => ((id = last.value.terminalId), { tool: T('terminal_write'), input: { terminalId: id, input: 'echo $((6 * 7)){Enter}', waitForText: '42' } }),
      () => ({ tool: T('terminal_write'), input: { terminalId: id, input: 'sleep 300\n' } }),
      () => ({ tool: T('terminal_write'), input: { terminalId: id, input: '{Ctrl-C}', waitForText: 'agent$', timeoutMs: 10000 } }),
      () => ({ tool: T('terminal_write'), input: { terminalId: id, input: 'echo alive-$((1 + 1)){Enter}', waitForText: 'alive-2' } }),
      () => ({ tool: T('terminal_read'), input: { terminalId: id } }),
      () => ({ tool: T('terminal_close'), input: { terminalId: id } }),
      () => ({ tool: T('terminal_read'), input: { terminalId: id } }),
      () => ({ text: 'done' }),
    ])
    const [opened, answer, slept, interrupted, alive2, read, closed, gone] = results
    assert.deepEqual(opened.value.lines, ['agent$'])
    assert.deepEqual(opened.value.cursor, { row: 0, col: 7 })
    assert.equal(answer.value.matched, true)
    assert.deepEqual(answer.value.lines.slice(0, 3), ['agent$ echo $((6 * 7))', '42', 'agent$'])
    assert.deepEqual(answer.value.cursor, { row: 2, col: 7 })
    assert.equal(slept.value.matched, undefined)
    assert.ok(slept.value.lines.includes('agent$ sleep 300'), slept.value.lines.join('\n'))
    assert.equal(interrupted.value.matched, true, JSON.stringify(interrupted.value))
    assert.equal(alive2.value.matched, true)
    assert.ok(alive2.value.lines.includes('alive-2'), alive2.value.lines.join('\n'))
    assert.equal(read.value.exited, undefined)
    assert.deepEqual(read.value.lines, alive2.value.lines)
    assert.equal(closed.value.closed, true)
    assert.equal(gone.value.exited, true)
  })
})

// Only a supervisor keeps the terminal running once the first Node process is gone.
describeBackends('agents in two Node processes', ['persistent'], { timeout: 60000 }, (backend) => {
  const each = perTest(backend, { prefix: 'procvisor-agent-tools-persistent-', defaults: ENV })
  const elsewhere = startedElsewhere('procvisor-agent-tools-elsewhere-')

  it("an agent in the next Node process reads and writes the terminal an agent opened in the first", async () => {
    const at = (file) => JSON.stringify(path.join(ROOT, file))
    const opened = await elsewhere.startIn(
      undefined,
      `const { Agent } = await import('@mastra/core/agent')
const { Workspace } = await import('@mastra/core/workspace')
const { createProcessTools } = await import(${at('mastra/index.mjs')})
const { scriptedModel } = await import(${at('__test__/mastra/scripted-model.mjs')})
const workspace = new Workspace({ sandbox: sb })
await workspace.init()
let id
const model = scriptedModel([
  () => ({ tool: 'mastra_workspace_terminal_open', input: { command: 'sh -i' } }),
  ({ last }) => ((id = last.value.terminalId), { tool: 'mastra_workspace_terminal_write', input: { terminalId: id, input: 'x=6{Enter}', waitForText: 'agent$' } }),
  () => ({ text: 'opened' }),
])
const agent = new Agent({ id: 'first', name: 'first', instructions: 'x', model, workspace, tools: createProcessTools(workspace) })
await agent.generate('go', { maxSteps: 5 })
console.log(JSON.stringify({ terminal: id, results: model.results }))
await sb.detach()`,
      ", env: { PATH: process.env.PATH, PS1: 'agent$ ' }",
    )
    assert.deepEqual(opened.results[1].value.lines, ['agent$ x=6', 'agent$'])

    const workspace = await workspaceOf(each, { id: opened.id, workingDirectory: opened.wd })
    const { results } = await run(workspace, [
      () => ({ tool: T('terminal_read'), input: { terminalId: opened.terminal } }),
      () => ({ tool: T('terminal_write'), input: { terminalId: opened.terminal, input: 'echo $((x * 7)){Enter}', waitForText: '42' } }),
      () => ({ tool: T('list_processes'), input: {} }),
      () => ({ text: 'done' }),
    ])
    const [read, answer, listed] = results
    assert.deepEqual(read.value.lines, ['agent$ x=6', 'agent$'])
    assert.equal(answer.value.matched, true)
    assert.deepEqual(answer.value.lines, ['agent$ x=6', 'agent$ echo $((x * 7))', '42', 'agent$'])
    assert.deepEqual(listed.value.terminals.map((t) => [t.terminalId, t.state]), [[opened.terminal, 'running']])
  })
})
