// examples/persistent-first.mjs: start the sandbox and a server, note how far its log was read, exit.
import { NativeLocalSandbox } from 'procvisor/mastra'

const sandbox = new NativeLocalSandbox({ id: 'agent-1', workingDirectory: './ws', persistent: true, timeoutMs: 3_600_000 })
await sandbox.start()
const { supervisor } = sandbox // 'started' the first time, detached
const server = await sandbox.processes.spawn('echo listening; i=0; while true; do i=$((i+1)); echo "tick $i"; sleep 0.2; done')
await server.nativeHandle.waitForLog(/listening/)
let cursor
for await (const e of await server.nativeHandle.logs()) cursor = e.cursor ?? cursor
console.log(supervisor, server.pid, cursor) // then Node exits; the server runs on
