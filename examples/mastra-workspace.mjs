// examples/mastra-workspace.mjs: Mastra's LocalSandbox on procvisor, in a Mastra workspace.
import { Workspace } from '@mastra/core/workspace'
// before: import { LocalSandbox } from '@mastra/core/workspace'
import { NativeLocalSandbox as LocalSandbox } from 'procvisor/mastra'

const workspace = new Workspace({
  sandbox: new LocalSandbox({ workingDirectory: './workspace', env: { PATH: process.env.PATH } }),
})
await workspace.init() // starts the sandbox: ./workspace is created if missing

const sandbox = workspace.sandbox
const result = await sandbox.executeCommand('sh', ['-c', 'echo "hello from $(pwd)"'])
console.log(result.exitCode, result.stdout.trim())

const server = await sandbox.processes.spawn('echo ready; sleep 600')
await server.nativeHandle.waitForLog(/ready/) // procvisor's own view of the same process
await sandbox.processes.kill(server.pid) // the whole group, at once
await workspace.destroy()
