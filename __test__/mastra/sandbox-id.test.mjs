// Sandbox ids: what a persistent sandbox accepts as its id, how its supervisor gets its config,
// and the checkpoint names made from ids of any length.
import { afterEach, beforeEach, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import * as fs from 'node:fs'
import * as path from 'node:path'
import { NativeLocalSandbox } from 'procvisor/mastra'
import { InvalidProcessOptionError } from 'procvisor'
import { tempDir } from './helpers.mjs'
import { freshId, sweep } from './persistent-common.mjs'
import { sandboxMaker } from './backends.mjs'

let tmp
let made = []

beforeEach(() => {
  tmp = tempDir('procvisor-sandbox-id-')
})

afterEach(async () => {
  for (const sb of made.splice(0)) {
    await sb.destroy().catch(() => {})
    if (sb.persistent) await sweep(sb.id)
  }
  fs.rmSync(tmp, { recursive: true, force: true })
})

const make = sandboxMaker(made, () => ({ checkpointsDirectory: path.join(tmp, 'ckpt'), timeoutMs: 60000 }))

const isIdError = (e) => e instanceof InvalidProcessOptionError && /\bid\b/.test(e.message)

describe('sandbox ids', () => {
  it('a persistent sandbox takes an id of 1 to 128 characters without control characters; others are typed errors', () => {
    const wd = path.join(tmp, 'wd')
    for (const id of ['x'.repeat(200_000), 'x'.repeat(129), '', 'a\nb', 'tab\there', 42]) {
      assert.throws(() => new NativeLocalSandbox({ id, workingDirectory: wd, persistent: true }), isIdError, JSON.stringify(String(id).slice(0, 20)))
    }
    for (const id of ['x'.repeat(128), 'agent 1/ünïcödé €', 'a']) {
      assert.equal(new NativeLocalSandbox({ id, workingDirectory: wd, persistent: true }).id, id)
    }
    // A sandbox that is not persistent keeps Mastra's rule: any id.
    assert.equal(new NativeLocalSandbox({ id: 'x'.repeat(1000), workingDirectory: wd }).id.length, 1000)
  })

  it('the supervisor reads its config from stdin, not from its command line; a 128-character id captures and restores its checkpoint', async () => {
    const id = `${freshId()}-`.padEnd(128, 'x')
    const sb = make({ id, workingDirectory: path.join(tmp, 'wd'), persistent: true, snapshotOnStop: true })
    await sb.start()
    const cmdline = fs.readFileSync(`/proc/${sb.supervisorPid}/cmdline`, 'utf8').split('\0')
    assert.ok(cmdline[cmdline.length - 2].endsWith(path.join('lib', 'persistent', 'server', 'supervisor.js')), cmdline.join(' '))
    assert.ok(!cmdline.some((a) => a.includes(id) || a.includes('{')), 'no config on the command line')
    await (await sb.processes.spawn('echo kept > file.txt')).wait()
    await sb.stop()
    assert.equal(sb.checkpointName, id)
    const later = make({ id, workingDirectory: path.join(tmp, 'wd2'), persistent: true, snapshotOnStop: true })
    await later.start()
    assert.equal(fs.readFileSync(path.join(tmp, 'wd2', 'file.txt'), 'utf8'), 'kept\n')
    await later.stop()
  })

  it('a checkpoint name made from a long id stays within 200 bytes and is found again by a later start', async () => {
    const id = `${freshId()}-`.padEnd(240, 'y')
    const sb = make({ id, workingDirectory: path.join(tmp, 'wd'), snapshotOnStop: true })
    assert.ok(Buffer.byteLength(sb.checkpointName) <= 200, sb.checkpointName)
    assert.equal(sb.checkpointName, make({ id, snapshotOnStop: true }).checkpointName, 'the same id makes the same name')
    assert.notEqual(sb.checkpointName, make({ id: `${id.slice(0, -1)}z`, snapshotOnStop: true }).checkpointName)
    await sb.start()
    await (await sb.processes.spawn('echo kept > file.txt')).wait()
    await sb.stop()
    assert.ok(fs.existsSync(path.join(tmp, 'ckpt', sb.checkpointName, 'file.txt')))
    const later = make({ id, workingDirectory: path.join(tmp, 'wd2'), snapshotOnStop: true })
    await later.start()
    assert.equal(fs.readFileSync(path.join(tmp, 'wd2', 'file.txt'), 'utf8'), 'kept\n')
    await later.stop()
  })
})
