// sandbox.checkpoints: named checkpoints that share unchanged files with the last capture, and a
// restore in place that leaves exactly what a restore into an empty directory makes, writing only
// what differs, with the sandbox's processes left running. Real files, real processes.
// On both procvisor backends.
import { afterEach, beforeEach, it } from 'node:test'
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import * as fs from 'node:fs'
import * as path from 'node:path'
import { InvalidProcessOptionError, SandboxSnapshotError } from 'procvisor'
import { alive } from './helpers.mjs'
import { settle, treeDifference, treeDigest } from './tree-digest.mjs'
import { describeBackends, perTest } from './backends.mjs'

/** A tree with what a restore can get wrong: modes, nanosecond mtimes, links, holes, empty and read-only directories. */
function makeTree(root) {
  fs.mkdirSync(path.join(root, 'src/lib'), { recursive: true })
  fs.mkdirSync(path.join(root, 'empty'))
  fs.mkdirSync(path.join(root, 'ro'))
  for (let i = 0; i < 40; i++) fs.writeFileSync(path.join(root, 'src', `m${i}.js`), `export const v = ${i}\n`.repeat(i + 1))
  fs.writeFileSync(path.join(root, 'src/lib/util.js'), 'util')
  fs.writeFileSync(path.join(root, 'run.sh'), '#!/bin/sh\necho hi\n', { mode: 0o755 })
  fs.writeFileSync(path.join(root, 'ro/file'), 'in a read-only directory')
  const fd = fs.openSync(path.join(root, 'disk.img'), 'w')
  fs.ftruncateSync(fd, 32 << 20)
  fs.writeSync(fd, 'data in the middle', 8 << 20)
  fs.closeSync(fd)
  fs.symlinkSync('src/m1.js', path.join(root, 'link'))
  fs.symlinkSync('missing', path.join(root, 'dangling'))
  fs.utimesSync(path.join(root, 'src/m1.js'), 1_600_000_000, 1_600_000_000.123)
  fs.chmodSync(path.join(root, 'ro'), 0o555)
}

function assertSameTree(a, b) {
  if (treeDigest(a) !== treeDigest(b)) assert.fail(`${a} and ${b} differ: ${JSON.stringify(treeDifference(a, b), null, 2)}`)
}

describeBackends('sandbox.checkpoints', ['native', 'persistent'], { timeout: 60000 }, (backend) => {
  let each
  // Registered before the fixture's cleanup, which then removes the directory: the tree's
  // read-only directory would stop that for anyone but root.
  afterEach(() => execFileSync('chmod', ['-R', 'u+rwX', each.dir]))
  each = perTest(backend, {
    prefix: 'procvisor-checkpoint-api-',
    defaults: (dir) => ({ checkpointsDirectory: path.join(dir, 'checkpoints'), env: { PATH: process.env.PATH } }),
  })
  let wd
  let cps
  beforeEach(() => {
    wd = path.join(each.dir, 'wd')
    cps = path.join(each.dir, 'checkpoints')
    makeTree(wd)
  })
  const sandbox = (options) => each.make(options)

  /** The same checkpoint restored the way start() restores, into an empty working directory. */
  async function fullRestore(name) {
    const into = path.join(each.dir, `full-${name}`)
    const sb = sandbox({ workingDirectory: into, checkpointName: name })
    await sb.start()
    await sb.stop()
    return into
  }

  it('restore() rolls the working directory back in place to exactly what a full restore makes, writing only what differs', async () => {
    const sb = sandbox()
    await settle()
    const captured = await sb.checkpoints.capture('before')
    assert.equal(captured.name, 'before')
    assert.equal(captured.files, 44)
    assert.ok(captured.createdAt instanceof Date && Math.abs(captured.createdAt - Date.now()) < 10000)
    const full = await fullRestore('before')
    assertSameTree(wd, full)

    const untouched = fs.statSync(path.join(wd, 'src/m20.js'))
    fs.writeFileSync(path.join(wd, 'src/m1.js'), 'changed')
    fs.chmodSync(path.join(wd, 'run.sh'), 0o600)
    fs.rmSync(path.join(wd, 'src/lib'), { recursive: true })
    fs.writeFileSync(path.join(wd, 'src/new.js'), 'new')
    fs.mkdirSync(path.join(wd, 'made/deeper'), { recursive: true })
    fs.rmdirSync(path.join(wd, 'empty'))
    fs.unlinkSync(path.join(wd, 'link'))
    fs.symlinkSync('elsewhere', path.join(wd, 'link'))
    fs.chmodSync(path.join(wd, 'ro'), 0o755)
    fs.writeFileSync(path.join(wd, 'ro/added'), 'x')
    const fd = fs.openSync(path.join(wd, 'disk.img'), 'r+')
    fs.writeSync(fd, 'more', 20 << 20)
    fs.closeSync(fd)

    const back = await sb.checkpoints.restore('before')
    assertSameTree(full, wd)
    assert.equal(back.name, 'before')
    assert.equal(back.files, 44)
    assert.equal(back.removed, 3, 'src/new.js, made/ and ro/added')
    // m1.js, run.sh, util.js and disk.img were copied, holes kept; nothing else was written.
    assert.ok(back.newBytes < 64 * 1024, `${back.newBytes} bytes written`)
    const now = fs.statSync(path.join(wd, 'src/m20.js'))
    assert.deepEqual([now.ino, now.ctimeMs], [untouched.ino, untouched.ctimeMs], 'an unchanged file is left as it was')
    assert.equal(sb.lastCheckpoint.operation, 'restore')
    assert.equal(sb.lastCheckpoint.unchanged, 40)
  })

  it('a capture shares the unchanged files with the last one, and deleting either never breaks the other', async () => {
    const sb = sandbox()
    await settle()
    const first = await sb.checkpoints.capture('one')
    assert.equal(first.newBytes, first.bytes - (32 << 20) + 4096, 'a first capture writes every byte but the holes')
    assert.deepEqual(first.skipped, [])
    fs.writeFileSync(path.join(wd, 'src/m3.js'), 'changed!')
    const second = await sb.checkpoints.capture()
    assert.match(second.name, /^checkpoint-\d{8}-\d{6}-\d{3}-[0-9a-f]{4}$/)
    assert.equal(second.newBytes, 8, 'only the changed file was written')
    assert.equal(fs.statSync(path.join(cps, 'one/src/m2.js')).ino, fs.statSync(path.join(cps, second.name, 'src/m2.js')).ino)

    const listed = await sb.checkpoints.list()
    assert.deepEqual(
      listed.map((c) => [c.name, c.files, c.newBytes]),
      [
        ['one', 44, first.newBytes],
        [second.name, 44, 8],
      ],
    )
    assert.ok(listed[0].createdAt <= listed[1].createdAt)

    await sb.checkpoints.delete('one')
    assert.deepEqual((await sb.checkpoints.list()).map((c) => c.name), [second.name])
    fs.writeFileSync(path.join(wd, 'src/m2.js'), 'scribbled')
    await sb.checkpoints.restore(second.name)
    assertSameTree(await fullRestore(second.name), wd)
    assert.equal(fs.readFileSync(path.join(wd, 'src/m3.js'), 'utf8'), 'changed!')
    assert.equal(fs.readFileSync(path.join(wd, 'src/m2.js'), 'utf8'), 'export const v = 2\n'.repeat(3))
  })

  it('a capture says what it left out', async () => {
    const sb = sandbox()
    execFileSync('mkfifo', [path.join(wd, 'pipe')])
    const made = await sb.checkpoints.capture('with-pipe')
    assert.deepEqual(made.skipped, [{ path: 'pipe', kind: 'fifo' }])
    assert.ok(!fs.existsSync(path.join(cps, 'with-pipe', 'pipe')))
    assert.deepEqual(sb.lastCheckpoint.skipped, made.skipped)
  })

  it('snapshot() and the restore in start() use the same checkpoints', async () => {
    const sb = sandbox({ checkpointName: 'main' })
    await settle()
    await sb.checkpoints.capture('named')
    await sb.snapshot()
    assert.equal(sb.lastCheckpoint.name, 'main')
    assert.equal(sb.lastCheckpoint.unchanged, 44, 'snapshot() shares every file with the named capture')
    assert.equal(sb.lastCheckpoint.newBytes, 0)
    fs.writeFileSync(path.join(wd, 'src/m5.js'), 'edited')
    await sb.checkpoints.restore('main')
    assertSameTree(await fullRestore('main'), wd)
  })

  it('restore() leaves the running processes alone', async () => {
    const sb = sandbox()
    await sb.start()
    await sb.checkpoints.capture('clean')
    const server = await sb.processes.spawn('exec 3<src/m7.js; echo ready; while true; do sleep 0.05; done')
    await server.nativeHandle.waitForLog(/ready/)
    fs.writeFileSync(path.join(wd, 'src/m7.js'), 'rewritten while held open')
    const back = await sb.checkpoints.restore('clean')
    assert.equal(back.removed, 0)
    assert.ok(alive(server.pid), 'the process still runs')
    assert.equal((await sb.processes.list()).length, 1)
    // The process's open file is the one it opened; the working directory has the checkpoint's.
    const held = fs.readlinkSync(`/proc/${server.pid}/fd/3`)
    assert.match(held, /\(deleted\)$/)
    assert.equal(fs.readFileSync(path.join(wd, 'src/m7.js'), 'utf8'), 'export const v = 7\n'.repeat(8))
    await sb.processes.kill(server.pid)
  })

  it('a bad name is an InvalidProcessOptionError and an unknown one a SandboxSnapshotError naming it', async () => {
    const sb = sandbox()
    for (const bad of ['../x', '.hidden', '', 'a/b', 7, null]) {
      await assert.rejects(sb.checkpoints.capture(bad), InvalidProcessOptionError, String(bad))
      await assert.rejects(sb.checkpoints.restore(bad), InvalidProcessOptionError, String(bad))
      await assert.rejects(sb.checkpoints.delete(bad), InvalidProcessOptionError, String(bad))
    }
    assert.deepEqual(await sb.checkpoints.list(), [], 'no checkpoints directory yet: none')
    for (const op of ['restore', 'delete']) {
      await assert.rejects(sb.checkpoints[op]('nope'), (e) => {
        assert.ok(e instanceof SandboxSnapshotError, e.stack)
        assert.equal(e.code, 'SANDBOX_SNAPSHOT_FAILED')
        assert.equal(e.osCode, 'ENOENT')
        assert.equal(e.path, path.join(cps, 'nope'))
        assert.match(e.message, /no checkpoint named "nope"/)
        return true
      })
    }
    assert.equal(fs.readFileSync(path.join(wd, 'src/m1.js'), 'utf8'), 'export const v = 1\n'.repeat(2), 'nothing was changed')
  })
})
