// Typings of process names: the option on both faces and on a sandbox's spawn, where it is
// reported, and that it is a string.
import { ProcessManager, type ProcessStatus, type ProcessInfo } from 'procvisor'
import { NativeLocalSandbox } from 'procvisor/mastra'

export async function names(pm: ProcessManager, sb: NativeLocalSandbox): Promise<void> {
  const proc = await pm.exec(['node', 'server.js'], { name: 'api' })
  const handle = await pm.spawn('npm run dev', { name: 'dev-server', restart: { policy: 'always' } })
  const status: ProcessStatus = await proc.status()
  const fromStatus: string | undefined = status.name
  const fromProcess: string | undefined = proc.name
  const fromHandle: string | undefined = handle.name
  const listed: ProcessInfo[] = await pm.list()
  const fromList: string | undefined = listed[0]?.name
  const byName = await pm.getProcess('api')
  await pm.kill('dev-server', 'SIGTERM')
  const sandboxed = await sb.processes.spawn('npm run dev', { name: 'web' })
  const sandboxName: string | undefined = sandboxed.name
  await sb.processes.kill('web')
  // @ts-expect-error a name is a string
  await pm.exec(['true'], { name: 42 })
  // @ts-expect-error a name is a string
  await sb.processes.spawn('true', { name: true })
  void [fromStatus, fromProcess, fromHandle, fromList, byName, sandboxName]
}
