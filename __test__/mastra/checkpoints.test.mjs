// Checkpoints against what would break them: a checkpoints directory inside the working
// directory (a capture would copy itself), and several sandboxes capturing one name at once.
import { afterEach, beforeEach, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import * as fs from 'node:fs'
import * as path from 'node:path'
import { createRequire } from 'node:module'
import { InvalidProcessOptionError } from 'procvisor'
import { NativeLocalSandbox } from 'procvisor/mastra'
import { tempDir } from './helpers.mjs'

const { binding } = createRequire(import.meta.url)('../../lib/native/native.js')

let tmp
let wd
beforeEach(() => {
  tmp = tempDir('procvisor-checkpoints-')
  wd = path.join(tmp, 'wd')
  fs.mkdirSync(wd)
  fs.writeFileSync(path.join(wd, 'f'), 'f')
})
afterEach(() => {
  execFileSync('chmod', ['-R', 'u+rwX', tmp])
  fs.rmSync(tmp, { recursive: true, force: true })
})

const insideError = (e) => e instanceof InvalidProcessOptionError && e.code === 'INVALID_PROCESS_OPTION' && /inside the working directory/.test(e.message)

describe('a checkpoints directory inside the working directory', { timeout: 20000 }, () => {
  it('is refused by the constructor, however the path is written', () => {
    fs.symlinkSync(wd, path.join(tmp, 'link'))
    for (const checkpointsDirectory of [
      path.join(wd, '.checkpoints'),
      wd,
      path.join(tmp, 'link', 'cps'),
      path.join(wd, 'missing', '..', 'cps'),
    ]) {
      assert.throws(() => new NativeLocalSandbox({ workingDirectory: wd, checkpointsDirectory, snapshotOnStop: true }), insideError, checkpointsDirectory)
    }
    // Beside it is fine, under a name that starts like it too, and so is Mastra's default.
    new NativeLocalSandbox({ workingDirectory: wd, checkpointsDirectory: path.join(tmp, 'wd-checkpoints') })
    new NativeLocalSandbox({ workingDirectory: wd })
  })

  it('is refused by the native capture before anything is written', async () => {
    await assert.rejects(binding.captureCheckpoint(wd, path.join(wd, '.checkpoints'), 'box'), insideError)
    await assert.rejects(binding.captureCheckpoint(wd, wd, 'box'), insideError)
    assert.deepEqual(fs.readdirSync(wd), ['f'])
  })
})

/** Every file of a tree with its content, by relative path. */
function contents(root) {
  const out = {}
  for (const rel of fs.readdirSync(root, { recursive: true }).sort()) {
    const p = path.join(root, rel)
    out[rel] = fs.lstatSync(p).isDirectory() ? 'dir' : fs.readFileSync(p, 'utf8')
  }
  return out
}

describe('sandboxes capturing one checkpoint name at once', { timeout: 60000 }, () => {
  it('all succeed, the checkpoint is one whole capture, and nothing is left beside it', async () => {
    const cps = path.join(tmp, '.checkpoints')
    const boxes = [0, 1, 2, 3].map((i) => {
      const dir = path.join(tmp, `wd${i}`)
      fs.mkdirSync(path.join(dir, 'sub'), { recursive: true })
      for (let f = 0; f < 2; f++) fs.writeFileSync(path.join(dir, 'sub', `f${f}`), `${i}`)
      fs.writeFileSync(path.join(dir, 'who'), `${i}`)
      return new NativeLocalSandbox({ id: `box-${i}`, workingDirectory: dir, checkpointsDirectory: cps, checkpointName: 'shared' })
    })
    const wanted = boxes.map((b) => JSON.stringify(contents(b.workingDirectory)))
    for (let time = 0; time < 40; time++) {
      const results = await Promise.allSettled(boxes.map((b) => b.snapshot()))
      assert.deepEqual(results.filter((r) => r.status === 'rejected').map((r) => r.reason.message), [], `time ${time}`)
      assert.deepEqual(fs.readdirSync(cps).sort(), ['.owner-shared', 'shared'], `time ${time}: nothing left beside it`)
      assert.ok(wanted.includes(JSON.stringify(contents(path.join(cps, 'shared')))), `time ${time}: one whole capture`)
    }
  })
})
