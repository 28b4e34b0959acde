// Starting a persistent sandbox's supervisor: what reaches it is resolved on the client's side,
// and it starts whatever the caller's environment holds.
import { afterEach, beforeEach, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import * as fs from 'node:fs'
import * as path from 'node:path'
import { NativeLocalSandbox } from 'procvisor/mastra'
import { alive, eventually, tempDir } from './helpers.mjs'
import { IMPORT, child, freshId, sweep } from './persistent-helpers.mjs'

let tmp
let ids = []
const children = []

beforeEach(() => {
  tmp = tempDir('procvisor-persistent-start-')
})

afterEach(async () => {
  for (const p of children.splice(0)) if (p.exitCode === null && p.signalCode === null) p.kill('SIGKILL')
  for (const id of ids.splice(0)) await sweep(id)
  fs.rmSync(tmp, { recursive: true, force: true })
})

const newId = () => {
  const id = freshId()
  ids.push(id)
  return id
}

describe('starting a persistent sandbox', () => {
  it('resolves relative paths against the starting Node process: working directory, spawn cwd, checkpoints', async () => {
    const id = newId()
    fs.mkdirSync(path.join(tmp, 'ws', 'sub'), { recursive: true })
    const c = child(
      children,
      `${IMPORT}
      const sb = new NativeLocalSandbox({ id: ${JSON.stringify(id)}, workingDirectory: './ws', checkpointsDirectory: './ckpt', persistent: true, timeoutMs: 1500, snapshotOnStop: true })
      await sb.start()
      const p = await sb.processes.spawn('echo kept > ../file.txt; pwd', { cwd: 'sub' })
      const r = await p.wait()
      console.log(JSON.stringify({ pwd: r.stdout.trim(), wd: sb.workingDirectory, supervisor: sb.supervisorPid }))`,
      { cwd: tmp },
    )
    const a = await c.first
    assert.equal((await c.exited).code, 0)
    // The end of the lifetime captures the working directory into ./ckpt of the starting process.
    assert.equal(await eventually(() => !alive(a.supervisor), 10_000), true, 'the lifetime ended the supervisor')
    assert.equal(fs.existsSync(path.join(tmp, 'ws', 'ckpt')), false, 'nothing was captured inside the working directory')
    const names = fs.existsSync(path.join(tmp, 'ckpt')) ? fs.readdirSync(path.join(tmp, 'ckpt')).filter((n) => !n.startsWith('.')) : []
    assert.equal(names.length, 1, `one checkpoint in ${path.join(tmp, 'ckpt')}`)
    assert.equal(fs.readFileSync(path.join(tmp, 'ckpt', names[0], 'file.txt'), 'utf8'), 'kept\n')
    assert.equal(a.pwd, path.join(tmp, 'ws', 'sub'))
    assert.equal(a.wd, path.join(tmp, 'ws'))
  })
})
