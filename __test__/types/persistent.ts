// Typings of persistent sandboxes (procvisor/mastra): the option, the getters, detach(), the
// remote handles and the three errors, one class each from both entries.
import { NativeLocalSandbox, NativeProcessHandle, type NativeHandle, SandboxSupervisorLostError, SandboxProtocolError, SandboxAccessError } from 'procvisor/mastra'
import { type ProcessLogEvent, SandboxSupervisorLostError as RootLost, SandboxProtocolError as RootProtocol, SandboxAccessError as RootAccess } from 'procvisor'

export async function persistentSandbox(): Promise<void> {
  const sb = new NativeLocalSandbox({ id: 'dev-server', workingDirectory: './ws', persistent: true, timeoutMs: 600_000 })
  const persistent: boolean = sb.persistent
  const supervisor: number | undefined = sb.supervisorPid
  const { outcome } = await sb.start()
  const how = sb.supervisor
  const started: 'created' | 'connected' = outcome
  const joined: 'started' | 'joined' | undefined = how
  const handle = await sb.processes.spawn('npm run dev')
  const again = await sb.processes.get(handle.pid)
  const text: string | undefined = again?.stdout
  await handle.nativeHandle.waitForPort(3000, { timeout: 30_000 })
  const logs: ReadableStream<ProcessLogEvent> | undefined = await (await sb.processes.get(handle.pid))?.nativeHandle.logs()
  const native: NativeHandle | undefined = again?.nativeHandle
  const code: number | undefined = native?.exitCode
  const waited: number | undefined = (await native?.wait())?.exitCode
  try {
    await sb.processes.list()
  } catch (e) {
    if (e instanceof SandboxSupervisorLostError) {
      const code: 'SANDBOX_SUPERVISOR_LOST' = e.code
      void code
    } else if (e instanceof SandboxProtocolError) {
      const code: 'SANDBOX_PROTOCOL_MISMATCH' = e.code
      void code
    } else if (e instanceof SandboxAccessError) {
      const code: 'SANDBOX_ACCESS_DENIED' = e.code
      void code
    }
  }
  await sb.detach()
  const same: [typeof RootLost, typeof RootProtocol, typeof RootAccess] = [SandboxSupervisorLostError, SandboxProtocolError, SandboxAccessError]
  // @ts-expect-error persistent is a boolean
  new NativeLocalSandbox({ persistent: 'yes' })
  const one: NativeProcessHandle | undefined = again
  void [one, logs, code, waited, persistent, supervisor, outcome, started, joined, text, same]
}
