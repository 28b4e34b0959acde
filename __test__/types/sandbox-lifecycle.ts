// Typings of NativeLocalSandbox's lifetime, checkpoints and reconnection (procvisor/mastra).
import { NativeLocalSandbox, SandboxSnapshotError, type NativeCheckpointReport } from 'procvisor/mastra'
import { SandboxSnapshotError as RootSnapshotError } from 'procvisor'

export async function sandboxLifecycle(): Promise<void> {
  const sb = new NativeLocalSandbox({ id: 'agent-1', workingDirectory: './ws', timeoutMs: 60_000, snapshotOnStop: true, checkpointName: 'base' })
  const { outcome } = await sb.start()
  const how: 'created' | 'connected' = outcome
  const at: Date | undefined = sb.expiresAt
  const spawned = await sb.processes.spawn('echo hi')
  const logs = await (await sb.processes.get(spawned.pid))?.nativeHandle.logs()
  const ms: number | undefined = sb.timeoutMs
  const on: boolean = sb.snapshotOnStop
  const name: string | undefined = sb.checkpointName
  const report: NativeCheckpointReport | undefined = sb.lastCheckpoint
  const skipped: string[] | undefined = report?.skipped.map((s) => `${s.kind} ${s.path}`)
  const info = await sb.getInfo()
  const timeoutAt: Date | undefined = info.timeoutAt
  await sb.snapshot()
  const clone: NativeLocalSandbox = sb.clone({ id: 'agent-2' })
  try {
    await sb.snapshot()
  } catch (e) {
    if (e instanceof SandboxSnapshotError) {
      const code: 'SANDBOX_SNAPSHOT_FAILED' = e.code
      const where: string | undefined = e.path
      void [code, where]
    }
  }
  const same: typeof RootSnapshotError = SandboxSnapshotError
  // @ts-expect-error timeoutMs is a number of milliseconds
  new NativeLocalSandbox({ timeoutMs: '5s' })
  // @ts-expect-error snapshotOnStop is a boolean
  new NativeLocalSandbox({ snapshotOnStop: 'yes' })
  void [logs, how, at, ms, on, name, skipped, timeoutAt, clone, same]
}

export async function probedSpawn(sb: NativeLocalSandbox): Promise<void> {
  const h = await sb.processes.spawn('npm run dev', {
    readiness: { http: { port: 3000, path: '/health' }, periodMs: 500 },
    liveness: { port: 3000, failureThreshold: 5 },
    shutdown: { signal: 'SIGINT', timeoutMs: 10_000 },
  })
  const ready: boolean | undefined = (await h.nativeHandle.status()).ready
  // @ts-expect-error a probe needs a target
  await sb.processes.spawn('x', { readiness: { timeoutMs: 100 } })
  void ready
}
