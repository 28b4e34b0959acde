// examples/checkpoints.mjs: name a checkpoint, let the agent work, roll the directory back in place.
import fs from 'node:fs'
import { NativeLocalSandbox } from 'procvisor/mastra'

const sandbox = new NativeLocalSandbox({ workingDirectory: './project' })
await sandbox.start()
fs.writeFileSync('./project/app.js', 'console.log("v1")\n')
await sandbox.checkpoints.capture('before-refactor')

fs.writeFileSync('./project/app.js', 'console.log("v2, broken")\n') // the agent's edits
fs.writeFileSync('./project/scratch.txt', 'notes')
const { name } = await sandbox.checkpoints.capture() // shares the files unchanged since the last one

const back = await sandbox.checkpoints.restore('before-refactor') // writes only what differs
console.log(fs.readFileSync('./project/app.js', 'utf8').trim(), `${back.removed} removed`)
console.log((await sandbox.checkpoints.list()).map((c) => c.name).join(' ') === `before-refactor ${name}`)
await sandbox.stop()
