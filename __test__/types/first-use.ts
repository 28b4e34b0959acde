// Typings met on first use: what `start()` resolves with, the handle `processes.get()` returns,
// without casts.
import { NativeLocalSandbox, NativeProcessHandle, NativeProcessManager } from 'procvisor/mastra'
import type { ProcessHandle as ProcvisorProcessHandle } from 'procvisor'

export async function firstUse(): Promise<void> {
  const sb = new NativeLocalSandbox({ workingDirectory: './ws' })
  // The README's `const { outcome } = await sandbox.start()`.
  const { outcome } = await sb.start()
  const known: 'created' | 'connected' = outcome
  const started = await sb.processes.spawn('npm run dev')
  const found: NativeProcessHandle | undefined = await sb.processes.get(started.pid)
  const view: ProcvisorProcessHandle | undefined = found?.nativeHandle
  await view?.waitForPort(3000)
  const pm = new NativeProcessManager()
  const alsoFound: NativeProcessHandle | undefined = await pm.get('123')
  void [known, alsoFound]
}
