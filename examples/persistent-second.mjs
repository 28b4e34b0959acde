// examples/persistent-second.mjs <pid> <cursor>, later: attach, print what came after the cursor, stop.
import { NativeLocalSandbox } from 'procvisor/mastra'

const [pid, cursor] = process.argv.slice(2)
const sandbox = new NativeLocalSandbox({ id: 'agent-1', workingDirectory: './ws', persistent: true })
await sandbox.start()
const { supervisor } = sandbox // 'joined': the supervisor was already serving
const server = await sandbox.processes.get(pid) // with its retained stdout/stderr
for await (const e of await server.nativeHandle.logs({ since: cursor, follow: true })) {
  if (e.type !== 'stdout') continue
  console.log(supervisor, Buffer.from(e.data).toString().trim()) // the first output after the cursor
  break
}
await sandbox.stop() // the server and the supervisor end
