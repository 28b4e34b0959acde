// `procvisor checkpoint` against a real persistent sandbox started by a Node process of its own
// that then exits, and sandbox.checkpoints of an object attached to the same sandbox: one set of
// checkpoints, copies made by whoever calls, the sandbox's processes left running.
import { describe, it, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import * as fs from 'node:fs'
import * as path from 'node:path'
import { createRequire } from 'node:module'
import { NativeLocalSandbox } from 'procvisor/mastra'
import { alive, tempDir } from './helpers.mjs'
import { procvisor, startElsewhere, freshId, sweep } from './persistent-common.mjs'
import { privateSockets } from './backends.mjs'
import { treeDifference, treeDigest } from './tree-digest.mjs'

const { binding } = createRequire(import.meta.url)('../../lib/native/native.js')

privateSockets()
const children = []
let tmp
let id
let wd
let cps
let server

const cli = procvisor

/** The checkpoint `name` restored into an empty directory, as start() restores it. */
async function fullRestore(name) {
  const into = path.join(tmp, `full-${name}-${Math.random().toString(16).slice(2)}`)
  fs.mkdirSync(into)
  await binding.restoreCheckpoint(path.join(cps, name), into)
  return into
}

function assertSameTree(a, b) {
  if (treeDigest(a) !== treeDigest(b)) assert.fail(`${a} and ${b} differ: ${JSON.stringify(treeDifference(a, b), null, 2)}`)
}

before(async () => {
  tmp = tempDir('procvisor-cli-checkpoint-')
  id = freshId()
  wd = path.join(tmp, 'wd')
  cps = path.join(tmp, '.checkpoints')
  fs.mkdirSync(path.join(wd, 'src'), { recursive: true })
  for (let i = 0; i < 20; i++) fs.writeFileSync(path.join(wd, 'src', `f${i}.txt`), `file ${i}\n`)
  fs.mkdirSync(path.join(wd, 'empty'))
  fs.symlinkSync('src/f0.txt', path.join(wd, 'link'))
  const c = startElsewhere(
    children,
    { id, workingDirectory: wd },
    `const s = await sb.processes.spawn('while true; do sleep 0.1; done')
console.log(JSON.stringify({ pid: s.pid }))`,
  )
  server = Number((await c.first).pid)
  await c.exited
})
after(async () => {
  await sweep(id)
  for (const c of children) c.kill('SIGKILL')
  fs.rmSync(tmp, { recursive: true, force: true })
})

describe('procvisor checkpoint', { timeout: 60000 }, () => {
  it('captures, lists, restores in place and deletes the checkpoints of a running sandbox', async () => {
    const capture = await cli('checkpoint', 'capture', id, 'first')
    assert.equal(capture.status, 0, capture.err)
    assert.match(capture.out, /^captured checkpoint first: 20 files, \d+ bytes/)
    const record = fs.readFileSync(path.join(cps, '.owner-first'), 'utf8')
    assert.match(record, new RegExp(`^id=${Buffer.from(id).toString('hex')}$`, 'm'), "recorded as the sandbox's own")

    fs.writeFileSync(path.join(wd, 'src/f3.txt'), 'changed')
    fs.rmSync(path.join(wd, 'empty'), { recursive: true })
    fs.writeFileSync(path.join(wd, 'extra'), 'not in the checkpoint')
    const restore = await cli('checkpoint', 'restore', id, 'first')
    assert.equal(restore.status, 0, restore.err)
    assert.match(restore.out, /^restored checkpoint first into .*: \d+ of 20 files copied \(\d+ bytes\), 1 entries removed$/m)
    assertSameTree(await fullRestore('first'), wd)
    assert.ok(alive(server), "the sandbox's process still runs")

    const unnamed = await cli('checkpoint', 'capture', id)
    assert.equal(unnamed.status, 0, unnamed.err)
    const generated = unnamed.out.match(/^captured checkpoint (checkpoint-\d{8}-\d{6}-\d{3}-[0-9a-f]{4}):/)[1]
    const ls = await cli('checkpoint', 'ls', id, '--json')
    assert.equal(ls.status, 0, ls.err)
    const listed = JSON.parse(ls.out)
    assert.deepEqual(listed.map((c) => [c.name, c.files]), [['first', 20], [generated, 20]])
    assert.ok(listed.every((c) => !Number.isNaN(Date.parse(c.createdAt)) && typeof c.newBytes === 'number'))
    const table = await cli('checkpoint', 'ls', id)
    assert.match(table.out, /^NAME +CREATED +FILES +BYTES +WRITTEN\nfirst +/)

    // What a capture leaves out is named: a FIFO holds no data to copy.
    execFileSync('mkfifo', [path.join(wd, 'pipe')])
    const withPipe = await cli('checkpoint', 'capture', id, 'with-pipe')
    assert.equal(withPipe.status, 0, withPipe.err)
    assert.match(withPipe.out, /^not in it: pipe \(fifo\) \(/m)
    assert.doesNotMatch(capture.out, /not in it/, 'nothing is said where nothing was left out')
    fs.rmSync(path.join(wd, 'pipe'))
    await cli('checkpoint', 'rm', id, 'with-pipe')

    const rm = await cli('checkpoint', 'rm', id, 'first')
    assert.equal(rm.status, 0, rm.err)
    assert.equal(rm.out, 'deleted checkpoint first\n')
    assert.deepEqual(JSON.parse((await cli('checkpoint', 'ls', id, '--json')).out).map((c) => c.name), [generated])
    assert.ok(alive(server))
  })

  it('refuses a bad name as a usage error and names an unknown one', async () => {
    for (const args of [['restore', id, '../x'], ['rm', id], ['ls', id, 'name'], ['undo', id]]) {
      const r = await cli('checkpoint', ...args)
      assert.equal(r.status, 2, `${args.join(' ')}: ${r.err}`)
    }
    for (const action of ['restore', 'rm']) {
      const r = await cli('checkpoint', action, id, 'nope')
      assert.equal(r.status, 1, r.err)
      assert.match(r.err, /no checkpoint named "nope"/)
    }
    const none = await cli('checkpoint', 'ls', 'no-such-sandbox')
    assert.equal(none.status, 1)
    assert.match(none.err, /no running sandbox with id no-such-sandbox/)
    const help = await cli('checkpoint', '--help')
    assert.equal(help.status, 0)
    assert.match(help.out, /^usage: procvisor checkpoint ls\|capture\|restore\|rm <sandbox> \[name\]/)
  })

  it('an object attached to the sandbox has the same checkpoints through sandbox.checkpoints', async () => {
    const sb = new NativeLocalSandbox({ id, workingDirectory: wd, persistent: true, env: { PATH: process.env.PATH } })
    await sb.start()
    assert.equal(sb.supervisor, 'joined')
    try {
      const mine = await sb.checkpoints.capture('from-js')
      assert.equal(mine.files, 20)
      const names = JSON.parse((await cli('checkpoint', 'ls', id, '--json')).out).map((c) => c.name)
      assert.ok(names.includes('from-js'), names.join(' '))
      fs.writeFileSync(path.join(wd, 'src/f9.txt'), 'edited by the agent')
      const back = await sb.checkpoints.restore('from-js')
      assert.equal(back.files, 20)
      assertSameTree(await fullRestore('from-js'), wd)
      assert.ok(alive(server), "the sandbox's process still runs")
      assert.deepEqual((await sb.processes.list()).map((p) => p.pid), [String(server)])
    } finally {
      await sb.detach()
    }
  })
})
