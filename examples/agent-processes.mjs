// examples/agent-processes.mjs: an agent that runs a server, waits for it, reads its log and uses a terminal.
import { Agent } from '@mastra/core/agent'
import { Workspace } from '@mastra/core/workspace'
import { NativeLocalSandbox, createProcessTools } from 'procvisor/mastra'

const workspace = new Workspace({
  sandbox: new NativeLocalSandbox({ workingDirectory: './agent-ws', env: { PATH: process.env.PATH } }),
})
await workspace.init()
const tools = createProcessTools(workspace) // mastra_workspace_wait_for_port, ..._read_logs, ..._terminal_write, ...

const port = Number(process.env.PORT ?? 8080)
const server = `node -e "require('http').createServer((q, s) => s.end('hi')).listen(${port}, () => console.log('listening'))"`
const model = process.argv[2] // e.g. 'openai/gpt-5-mini', with its API key in the environment
if (model) {
  const agent = new Agent({
    id: 'dev',
    name: 'dev',
    instructions: 'Run servers in the background and wait for their port; use a terminal for interactive programs.',
    model,
    workspace, // Mastra's own sandbox tools: execute_command, get_process_output, kill_process
    tools,
  })
  const answer = await agent.generate(`Start \`${server}\` in the background, wait until port ${port} answers HTTP, show me its log, then stop it. Then compute 6 * 7 in an interactive shell.`)
  console.log(answer.text)
} else {
  // No model given: play its part, calling the tools as it would.
  const call = (name, input) => tools[`mastra_workspace_${name}`].execute(input, {})
  const { pid } = await workspace.sandbox.processes.spawn(server) // what execute_command with background: true does
  const { ready } = await call('wait_for_port', { pid, port, mode: 'http' })
  const { text, cursor } = await call('read_logs', { pid }) // again with { since: cursor } for what follows
  console.log('ready', ready, 'log', text.trim(), cursor ? 'and a cursor' : '')
  const { terminalId } = await call('terminal_open', { command: 'sh -i' })
  const { lines } = await call('terminal_write', { terminalId, input: 'echo $((6 * 7)){Enter}', waitForText: '42' })
  console.log('terminal shows', lines.find((line) => line === '42'))
  await call('terminal_close', { terminalId })
  await workspace.sandbox.processes.kill(pid)
}
await workspace.destroy()
