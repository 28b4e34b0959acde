// Typings of sandbox.terminals (procvisor/mastra): one Terminal class, procvisor's, in both modes.
import { NativeLocalSandbox, type SandboxTerminals, type SandboxTerminalOptions } from 'procvisor/mastra'
import type { Terminal, TerminalSnapshot, ProcessLogEvent } from 'procvisor'

export async function sandboxTerminals(): Promise<void> {
  const sb = new NativeLocalSandbox({ workingDirectory: './ws' })
  const terminals: SandboxTerminals = sb.terminals
  const options: SandboxTerminalOptions = { command: ['python3', '-i'], cols: 100, rows: 30, cwd: 'src', env: { LANG: undefined } }
  const t: Terminal = await terminals.create(options)
  await terminals.create({ command: 'npm run dev' })
  await terminals.create()
  const again: Terminal | null = await terminals.get(t.id)
  const all: Terminal[] = await terminals.list()
  await t.write('6 * 7\r')
  const snap: TerminalSnapshot = await t.getSnapshot()
  const row: number = snap.cursor.row
  const out: ReadableStream<ProcessLogEvent> = await t.output({ since: undefined })
  void [again, all, row, out]
}

export async function processTools(): Promise<void> {
  const { Workspace } = await import('@mastra/core/workspace')
  const { createProcessTools } = await import('procvisor/mastra')
  const workspace = new Workspace({ sandbox: new NativeLocalSandbox({ workingDirectory: './ws' }) })
  const tools = createProcessTools(workspace, { maxLogBytes: 8192, quietMs: 200 })
  const id: 'mastra_workspace_read_logs' = tools.mastra_workspace_read_logs.id
  const write = tools.mastra_workspace_terminal_write
  const restored = await tools.mastra_workspace_checkpoint_restore.execute?.({ name: 'before' }, {} as never)
  void [id, write, restored, createProcessTools(workspace.sandbox as NativeLocalSandbox)]
}

export async function agentWithProcessTools(): Promise<void> {
  const { Agent } = await import('@mastra/core/agent')
  const { Workspace } = await import('@mastra/core/workspace')
  const { createProcessTools } = await import('procvisor/mastra')
  const workspace = new Workspace({ sandbox: new NativeLocalSandbox({ workingDirectory: './ws' }) })
  const agent = new Agent({ id: 'ops', name: 'ops', instructions: 'x', model: 'openai/gpt-5', workspace, tools: { ...createProcessTools(workspace) } })
  void agent
}
