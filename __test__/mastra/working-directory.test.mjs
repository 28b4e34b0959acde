// A sandbox's relative paths (`workingDirectory: './ws'`, a relative `checkpointsDirectory`, a
// relative per-command `cwd`) name the directories they name from Node's working directory when
// the sandbox was built, and a relative per-command cwd lands where Mastra's LocalSandbox puts it.
import { afterEach, beforeEach, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import * as fs from 'node:fs'
import * as path from 'node:path'
import { LocalSandbox } from '@mastra/core/workspace'
import { NativeLocalSandbox } from 'procvisor/mastra'
import { tempDir } from './helpers.mjs'

let project
let elsewhere
let home
const sandboxes = []
function make(C, options) {
  const sb = new C(options)
  sandboxes.push(sb)
  return sb
}

beforeEach(() => {
  home = process.cwd()
  project = tempDir('procvisor-wd-project-')
  elsewhere = tempDir('procvisor-wd-elsewhere-')
  process.chdir(project)
})
afterEach(async () => {
  process.chdir(home)
  for (const sb of sandboxes.splice(0)) await sb._destroy().catch(() => {})
  for (const dir of [project, elsewhere]) fs.rmSync(dir, { recursive: true, force: true })
})

const pwd = async (sb, cwd) => {
  const r = await sb.executeCommand('pwd', [], cwd === undefined ? {} : { cwd })
  assert.equal(r.exitCode, 0, `pwd in ${cwd}: ${r.stderr}`)
  return r.stdout.trim()
}

describe('a relative working directory', { timeout: 20000 }, () => {
  it('is absolute from construction on, and commands and processes run in it', async () => {
    const sb = make(NativeLocalSandbox, { workingDirectory: './ws' })
    const ws = path.join(project, 'ws')
    assert.equal(sb.workingDirectory, ws)
    await sb.start()
    assert.ok(fs.statSync(ws).isDirectory())
    assert.equal(await pwd(sb), ws)
    const h = await sb.processes.spawn('pwd')
    assert.equal((await h.wait()).stdout.trim(), ws)
    // Node moving elsewhere later changes nothing: the directory was resolved once.
    process.chdir(elsewhere)
    assert.equal(await pwd(sb), ws)
    assert.equal((await (await sb.processes.spawn('pwd')).wait()).stdout.trim(), ws)
  })

  it('a relative per-command cwd lands where Mastra’s LocalSandbox puts it', async () => {
    for (const dir of ['ws/sub', 'ws/ws/sub', 'sub']) fs.mkdirSync(path.join(project, dir), { recursive: true })
    const name = path.basename(project)
    const cwds = ['sub', './sub', 'ws/sub', './ws/sub', '.', '..', `../${name}/ws/sub`]
    const mastra = make(LocalSandbox, { workingDirectory: './ws' })
    const native = make(NativeLocalSandbox, { workingDirectory: './ws' })
    await mastra.start()
    await native.start()
    const theirs = []
    const ours = []
    for (const cwd of cwds) theirs.push(await pwd(mastra, cwd))
    for (const cwd of cwds) ours.push(await pwd(native, cwd))
    assert.deepEqual(ours, theirs)
    const ws = path.join(project, 'ws')
    // Inside the working directory, or already naming a place inside it from Node's cwd.
    assert.deepEqual(ours, [`${ws}/sub`, `${ws}/sub`, `${ws}/sub`, `${ws}/sub`, ws, project, `${ws}/sub`])
    const spawned = await native.processes.spawn('pwd', { cwd: 'sub' })
    assert.equal((await spawned.wait()).stdout.trim(), `${ws}/sub`)
  })

  it('checkpoints go where the relative paths named at construction', async () => {
    const sb = make(NativeLocalSandbox, { workingDirectory: './ws', checkpointsDirectory: './checkpoints', checkpointName: 'base' })
    const byDefault = make(NativeLocalSandbox, { id: 'other', workingDirectory: 'ws2', checkpointName: 'base' })
    await sb.start()
    await byDefault.start()
    fs.writeFileSync(path.join(project, 'ws', 'file.txt'), 'kept')
    fs.writeFileSync(path.join(project, 'ws2', 'file.txt'), 'kept too')
    process.chdir(elsewhere)
    await sb.snapshot()
    await byDefault.snapshot()
    assert.equal(fs.readFileSync(path.join(project, 'checkpoints', 'base', 'file.txt'), 'utf8'), 'kept')
    // Mastra's default: `.checkpoints` next to the working directory.
    assert.equal(fs.readFileSync(path.join(project, '.checkpoints', 'base', 'file.txt'), 'utf8'), 'kept too')
    assert.deepEqual(fs.readdirSync(elsewhere), [])
  })
})
