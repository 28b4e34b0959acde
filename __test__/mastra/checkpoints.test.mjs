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

const { binding } = createRequire(import.meta.url)('../../lib/native.js')

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
