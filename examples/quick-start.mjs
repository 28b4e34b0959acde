// examples/quick-start.mjs: a dev server in the background, a command, an argv build, then close.
import { ProcessManager } from 'procvisor' // CommonJS: require('procvisor'), in an async function

const port = Number(process.env.PORT || 3000)
const pm = new ProcessManager({ workingDirectory: '.', env: { NODE_ENV: 'development' } })

// The Mastra surface: a shell command, a handle with a string pid.
const server = `node -e "require('node:http').createServer((q, s) => s.end('ok')).listen(${port}, () => console.log('listening'))"`
const dev = await pm.spawn(server, { onStdout: (text) => process.stdout.write(`dev: ${text}`) })
await dev.waitForPort(port, { mode: 'http', timeout: 60_000 }) // readiness on the same handle
const test = await (await pm.spawn('node --version', { timeout: 120_000 })).wait()
console.log(test.exitCode, test.stdout.trim())

// The Processes API: argv (no shell), resumable logs, typed errors.
const build = await pm.exec(['node', '-e', 'console.log("built")'], { timeout: 600_000 })
const { exitCode, stdout } = await build.output({ encoding: 'utf8' })
console.log(exitCode, stdout.trim())

await pm.kill(dev.pid) // SIGKILL to the whole group, waits, forgets the handle
await pm.close() // kills everything left; old handles become stale
