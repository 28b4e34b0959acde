// A sandbox's relative paths (`workingDirectory: './ws'`, a relative `checkpointsDirectory`, a
// relative per-command `cwd`) name the directories they name from Node's working directory when
// the sandbox was built, and a relative per-command cwd lands where Mastra's LocalSandbox puts it.
// With Node's working directory deleted, an absolute one works and the rest is INVALID_PROCESS_CWD.
// All of it on both procvisor backends.
import { afterEach, beforeEach, it } from 'node:test'
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import * as fs from 'node:fs'
import * as path from 'node:path'
import { ROOT, tempDir } from './helpers.mjs'
import { BACKENDS, describeBackends, end, perTest } from './backends.mjs'
import { freshId, sweep } from './persistent-common.mjs'

const MASTRA = BACKENDS.find((b) => b.mastra)

const pwd = async (sb, cwd) => {
  const r = await sb.executeCommand('pwd', [], cwd === undefined ? {} : { cwd })
  assert.equal(r.exitCode, 0, `pwd in ${cwd}: ${r.stderr}`)
  return r.stdout.trim()
}

describeBackends('a relative working directory', ['native', 'persistent'], { timeout: 20000 }, (backend) => {
  const t = perTest(backend, { prefix: 'procvisor-wd-' })
  // This test's directory holds the project (Node's working directory during the test) and a
  // place elsewhere to move to.
  let project
  let elsewhere
  let home
  beforeEach(() => {
    home = process.cwd()
    project = path.join(t.dir, 'project')
    elsewhere = path.join(t.dir, 'elsewhere')
    for (const dir of [project, elsewhere]) fs.mkdirSync(dir)
    process.chdir(project)
  })
  afterEach(() => process.chdir(home))

  it('is absolute from construction on, and commands and processes run in it', async () => {
    const sb = t.make({ workingDirectory: './ws' })
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
    const mastra = MASTRA.make({ workingDirectory: './ws' })
    const native = await t.start({ workingDirectory: './ws' })
    const theirs = []
    try {
      await mastra.start()
      for (const cwd of cwds) theirs.push(await pwd(mastra, cwd))
    } finally {
      await end(mastra)
    }
    const ours = []
    for (const cwd of cwds) ours.push(await pwd(native, cwd))
    assert.deepEqual(ours, theirs)
    const ws = path.join(project, 'ws')
    // Inside the working directory, or already naming a place inside it from Node's cwd.
    assert.deepEqual(ours, [`${ws}/sub`, `${ws}/sub`, `${ws}/sub`, `${ws}/sub`, ws, project, `${ws}/sub`])
    const spawned = await native.processes.spawn('pwd', { cwd: 'sub' })
    assert.equal((await spawned.wait()).stdout.trim(), `${ws}/sub`)
  })

  it('checkpoints go where the relative paths named at construction', async () => {
    const sb = await t.start({ workingDirectory: './ws', checkpointsDirectory: './checkpoints', checkpointName: 'base' })
    const byDefault = await t.start({ id: freshId(), workingDirectory: 'ws2', checkpointName: 'base' })
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

/** Runs `body` (async, returns a JSON value) in a child Node whose cwd is deleted first. */
function inGoneCwd(body) {
  const gone = tempDir('procvisor-gone-')
  const script = `
    const fs = require('node:fs')
    const { createRequire } = require('node:module')
    // As a program that chdir'd into a temporary directory and removed it (process.cwd() then throws).
    process.chdir(process.argv[1])
    fs.rmdirSync(process.argv[1])
    const { NativeLocalSandbox, NativeProcessManager } = require(${JSON.stringify(path.join(ROOT, 'mastra/index.js'))})
    const { InvalidProcessCwdError } = require(${JSON.stringify(ROOT)})
    const { MastraSandbox } = createRequire(${JSON.stringify(path.join(ROOT, 'package.json'))})('@mastra/core/workspace')
    const error = (e) => ({ name: e.name, code: e.code, message: e.message, typed: e instanceof InvalidProcessCwdError })
    ;(async () => { ${body} })().then(
      (v) => { process.stdout.write(JSON.stringify(v)); process.exit(0) },
      (e) => { process.stderr.write(String(e && e.stack)); process.exit(1) },
    )`
  const r = spawnSync(process.execPath, ['-e', script, gone], { encoding: 'utf8', timeout: 30_000 })
  fs.rmSync(gone, { recursive: true, force: true })
  assert.equal(r.status, 0, `child failed: ${r.stderr}`)
  return JSON.parse(r.stdout)
}

describeBackends('Node’s working directory deleted', ['native', 'persistent'], { timeout: 30000 }, (backend) => {
  const t = perTest(backend, { prefix: 'procvisor-wd-gone-' })
  // The backend's own constructor options, as source text for the child; a persistent sandbox's
  // supervisor is swept after the test whatever the child did.
  let id
  let own
  beforeEach(() => {
    id = freshId()
    own = backend.persistent ? JSON.stringify({ id, persistent: true }) : 'undefined'
  })
  afterEach(() => sweep(id))

  it('an absolute working directory works, a relative per-command cwd inside it too', async () => {
    const project = t.dir
    fs.mkdirSync(path.join(project, 'sub'))
    const out = inGoneCwd(`
      const sb = new NativeLocalSandbox({ ...${own}, workingDirectory: ${JSON.stringify(project)} })
      await sb.start()
      const r = [(await sb.executeCommand('pwd')).stdout.trim(), (await sb.executeCommand('pwd', [], { cwd: 'sub' })).stdout.trim()]
      r.push((await (await sb.processes.spawn('pwd', { cwd: 'sub' })).wait()).stdout.trim())
      await sb.destroy()
      return r
    `)
    assert.deepEqual(out, [project, `${project}/sub`, `${project}/sub`])
  })

  it('a path that needs it is INVALID_PROCESS_CWD, before anything starts', () => {
    const project = t.dir
    const out = inGoneCwd(`
      const own = ${own}
      const r = []
      for (const o of [own, { ...own, workingDirectory: 'ws' }, { ...own, workingDirectory: ${JSON.stringify(project)}, checkpointsDirectory: 'cks' }]) {
        try { new NativeLocalSandbox(o); r.push('constructed') } catch (e) { r.push(error(e)) }
      }
      // A sandbox of another kind without a working directory: its commands would run in Node's.
      class Bare extends MastraSandbox {
        constructor() { super({ name: 'Bare', processes: new NativeProcessManager() }); this.id = 'bare'; this.provider = 'bare'; this.status = 'pending' }
        async start() {}
      }
      try { await new Bare().processes.spawn('pwd'); r.push('spawned') } catch (e) { r.push(error(e)) }
      return r
    `)
    assert.equal(out.length, 4, JSON.stringify(out))
    for (const e of out) {
      assert.equal(e.code, 'INVALID_PROCESS_CWD', JSON.stringify(out))
      assert.equal(e.typed, true)
      assert.match(e.message, /working directory of this Node process, which is not available \(ENOENT\); give/)
    }
    assert.deepEqual(fs.readdirSync(project), [])
  })
})
