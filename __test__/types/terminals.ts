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
