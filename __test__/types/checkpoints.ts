// Typings of sandbox.checkpoints (procvisor/mastra): named checkpoints, captured incrementally and
// restored in place.
import {
  NativeLocalSandbox,
  SandboxSnapshotError,
  type SandboxCheckpoints,
  type CheckpointCaptured,
  type CheckpointListed,
  type CheckpointRestored,
} from 'procvisor/mastra'

export async function sandboxCheckpoints(): Promise<void> {
  const sb = new NativeLocalSandbox({ workingDirectory: './ws' })
  const checkpoints: SandboxCheckpoints = sb.checkpoints
  const made: CheckpointCaptured = await checkpoints.capture('before-edit')
  const unnamed: string = (await checkpoints.capture()).name
  const written: number = made.newBytes
  const when: Date = made.createdAt
  const all: CheckpointListed[] = await checkpoints.list()
  const known: number | undefined = all[0]?.newBytes
  const back: CheckpointRestored = await checkpoints.restore(made.name)
  const copiedBack: number = back.files - back.unchanged
  const removed: number = back.removed
  await checkpoints.delete(unnamed).catch((e: unknown) => e instanceof SandboxSnapshotError && e.osCode === 'ENOENT')
  const shared: number | undefined = sb.lastCheckpoint?.unchanged
  void [written, when, known, copiedBack, removed, shared]
}
