// procvisor/mastra showcase: a NativeLocalSandbox with a lifetime and a checkpoint on stop. A
// second object joins the running sandbox by id, the lifetime runs out in the middle of a
// command, the working directory is wiped, and a new sandbox with the same id starts restored.
import * as fs from 'node:fs'
import * as os from 'node:os'
import * as path from 'node:path'
import { NativeLocalSandbox } from 'procvisor/mastra'

const bold = (s) => (process.stdout.isTTY ? `\x1b[1m${s}\x1b[0m` : s)
const dim = (s) => (process.stdout.isTTY ? `\x1b[2m${s}\x1b[0m` : s)
const step = (s) => console.log(`\n${bold('▸ ' + s)}`)

const base = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'procvisor-demo-')))
const workingDirectory = path.join(base, 'workspace')
const options = {
  id: 'demo-agent',
  workingDirectory,
  env: { PATH: process.env.PATH },
  timeoutMs: 2000,
  snapshotOnStop: true,
  onStop: () => console.log(dim('  [onStop hook] the sandbox is stopping')),
}

try {
  step('Start a sandbox with a 2 s lifetime and a checkpoint on stop')
  const sandbox = new NativeLocalSandbox(options)
  const { outcome } = await sandbox._start()
  const info = await sandbox.getInfo()
  console.log(`  outcome ${outcome}, status ${sandbox.status}, expires at ${info.metadata.expiresAt}, checkpoint "${sandbox.checkpointName}"`)

  step('Write a small project into it')
  await sandbox.executeCommand('mkdir -p src empty && echo "console.log(42)" > src/app.js && printf "#!/bin/sh\\nnode src/app.js\\n" > run.sh && chmod +x run.sh && ln -s src/app.js main.js')
  console.log(dim((await sandbox.executeCommand('ls', ['-lA'])).stdout.trimEnd().replace(/^/gm, '  ')))

  step('A second object with the same id joins the running sandbox and sees its processes')
  const server = await sandbox.processes.spawn('echo "server up"; sleep 60')
  await new Promise((r) => setTimeout(r, 100))
  const again = new NativeLocalSandbox({ id: 'demo-agent', workingDirectory })
  console.log(`  outcome ${(await again._start()).outcome}`)
  for (const p of await again.processes.list()) {
    console.log(`  pid ${p.pid}  ${p.command}  output so far: ${JSON.stringify((await again.processes.get(p.pid)).stdout)}`)
  }

  step('Run a command that outlives the sandbox: the lifetime ends it')
  const t0 = Date.now()
  const result = await sandbox.executeCommand('echo "working…"; sleep 30; echo never')
  console.log(`  after ${Date.now() - t0} ms: exit ${result.exitCode}, killed ${result.killed}, stdout ${JSON.stringify(result.stdout)}`)
  while (sandbox.status !== 'stopped') await new Promise((r) => setTimeout(r, 20))
  console.log(`  status ${sandbox.status}; the joined object: ${again.status}; the server: exit ${server.exitCode}`)
  const cap = sandbox.lastCheckpoint
  console.log(`  checkpoint captured on stop: ${cap.files} files, ${cap.symlinks} symlink, ${cap.bytes} bytes in ${cap.durationMs.toFixed(1)} ms`)

  step('Wipe the working directory, then start a new sandbox with the same id')
  fs.rmSync(workingDirectory, { recursive: true })
  const restored = new NativeLocalSandbox(options)
  await restored._start()
  const r = restored.lastCheckpoint
  console.log(`  restored ${r.files} files and ${r.symlinks} symlink in ${r.durationMs.toFixed(1)} ms`)
  console.log(dim((await restored.executeCommand('ls', ['-lA'])).stdout.trimEnd().replace(/^/gm, '  ')))
  console.log(`  ./run.sh → ${(await restored.executeCommand('./run.sh')).stdout.trim()}`)

  step('destroy() deletes the checkpoint this id captured')
  const checkpoints = path.join(base, '.checkpoints')
  console.log(`  before: ${JSON.stringify(fs.readdirSync(checkpoints))}`)
  await restored._destroy()
  console.log(`  after:  ${JSON.stringify(fs.readdirSync(checkpoints))}`)
  console.log(`\n${bold('done')}`)
} finally {
  fs.rmSync(base, { recursive: true, force: true })
}
