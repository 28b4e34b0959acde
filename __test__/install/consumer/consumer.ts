// A TypeScript application, checked with `tsc --strict` against the installed typings only, then
// compiled and run: the types describe what the package does.
import { ProcessManager, ProcessHandle, InvalidProcessCwdError, liveProcessCount, type CommandResult, type ProcessOutput } from 'procvisor'
import { NativeLocalSandbox, type NativeProcessHandle } from 'procvisor/mastra'
import type { LocalSandbox } from '@mastra/core/workspace'

async function main(): Promise<void> {
  const pm = new ProcessManager({ env: { NAME: 'typed' } })
  const h: ProcessHandle = await pm.spawn('echo "hi $NAME"; exit 4', { timeout: 10_000, stdinMode: 'ignore' })
  const pid: string = h.pid
  const r: CommandResult = await h.wait()
  const p = await pm.exec(['sh', '-c', 'printf ok'])
  const out: ProcessOutput<string> = await p.output({ encoding: 'utf8' })
  const bytes: ProcessOutput<Uint8Array> = await (await pm.exec(['true'])).output()
  let cwdError = ''
  try {
    await pm.spawn('true', { cwd: '/procvisor-missing-dir' })
  } catch (err) {
    if (err instanceof InvalidProcessCwdError) cwdError = err.code
  }
  // @ts-expect-error spawn takes a command string, not argv
  void (() => pm.spawn(['echo', 'x']))
  // @ts-expect-error stdinMode is 'pipe' | 'ignore'
  void (() => pm.spawn('x', { stdinMode: 'inherit' }))
  await pm.close()

  const sandbox: LocalSandbox = new NativeLocalSandbox({ workingDirectory: '/tmp' })
  const typedHandle: NativeProcessHandle | undefined = undefined
  void typedHandle

  console.log(JSON.stringify({ pid, exitCode: r.exitCode, stdout: r.stdout, out: out.stdout, bytes: bytes.stdout.length, cwdError, live: liveProcessCount(), sandbox: sandbox.constructor.name }))
}

main().catch((err: unknown) => {
  console.error(err)
  process.exitCode = 1
})
