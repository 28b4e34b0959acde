// Typings of stacks: the config both faces take, the conditions of dependsOn, what up and down resolve with.
import { ProcessManager, type StackConfig, type StackUpResult, type StackDownResult } from 'procvisor'
import { NativeLocalSandbox } from 'procvisor/mastra'

export async function stacks(pm: ProcessManager, sb: NativeLocalSandbox): Promise<void> {
  const config: StackConfig = {
    id: 'shop',
    timeoutMs: 0,
    processes: {
      db: { command: 'node db.js', readiness: { port: 5432 }, shutdown: { signal: 'SIGTERM' } },
      api: { command: ['node', 'api.js'], dependsOn: { db: 'ready' }, liveness: { http: { port: 3000, path: '/health' } } },
      worker: { command: 'node worker.js', dependsOn: { api: 'healthy' }, env: { QUEUE: 'jobs' } },
    },
  }
  const up: StackUpResult = await pm.up(config, { onProgress: (name, what) => console.log(name, what) })
  const started: string[] = up.started
  const down: StackDownResult = await pm.down()
  const inSandbox: StackUpResult = await sb.processes.up(config)
  const stopped: string[] = (await sb.processes.down(config)).stopped
  // @ts-expect-error a condition is one of five words
  await pm.up({ processes: { a: { command: 'x', dependsOn: { b: 'up' } } } })
  // @ts-expect-error a process needs a command
  await sb.processes.up({ processes: { a: { cwd: '.' } } })
  void [started, down, inSandbox, stopped]
}
