// Starting a persistent sandbox's supervisor: what reaches it is resolved on the client's side,
// and it starts whatever the caller's environment holds.
import { afterEach, beforeEach, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import * as fs from 'node:fs'
import * as path from 'node:path'
import { NativeLocalSandbox } from 'procvisor/mastra'
import { createRequire } from 'node:module'
import { alive, eventually, sleep, tempDir } from './helpers.mjs'
import { IMPORT, child, freshId, processesWith, socketFor, sweep } from './persistent-common.mjs'

const { lockPathOf } = createRequire(import.meta.url)('../../lib/persistent/wire/location.js')

let tmp
let ids = []
const children = []

beforeEach(() => {
  tmp = tempDir('procvisor-persistent-start-')
})

afterEach(async () => {
  for (const p of children.splice(0)) if (p.exitCode === null && p.signalCode === null) p.kill('SIGKILL')
  for (const [id, env] of ids.splice(0)) await sweep(id, env)
  fs.rmSync(tmp, { recursive: true, force: true })
})

/** A fresh id, swept after the test with the environment its Node processes had. */
const newId = (env = process.env) => {
  const id = freshId()
  ids.push([id, env])
  return id
}

/** The pids of the supervisors running in `wd`. */
function supervisorsIn(wd) {
  const out = []
  for (const pid of processesWith('lib/persistent/server/supervisor.js')) {
    try {
      if (fs.readlinkSync(`/proc/${pid}/cwd`) === wd) out.push(pid)
    } catch {}
  }
  return out
}

/** A directory at `dir` with `mode`, whatever the umask. */
function dirWithMode(dir, mode) {
  fs.mkdirSync(dir, { recursive: true })
  fs.chmodSync(dir, mode)
  return dir
}

/** Starts sandbox `id` in a Node process with `env`, runs `echo`, prints the socket dir's listing. */
function startIn(id, env, { cwd = tmp } = {}) {
  return child(
    children,
    `${IMPORT}
    const sb = new NativeLocalSandbox({ id: ${JSON.stringify(id)}, workingDirectory: ${JSON.stringify(path.join(tmp, 'wd'))}, persistent: true, timeoutMs: 60000 })
    const { outcome } = await sb.start()
    const p = await sb.processes.spawn('echo ok')
    const r = await p.wait()
    console.log(JSON.stringify({ outcome, stdout: r.stdout, supervisor: sb.supervisorPid, preloaded: globalThis.preloaded === true }))
    await sb.stop()`,
    { cwd, env },
  )
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

  it('starts the supervisor without the caller\'s NODE_OPTIONS (a cwd-relative --require)', async () => {
    fs.writeFileSync(path.join(tmp, 'preload.cjs'), 'globalThis.preloaded = true\n')
    const env = { ...process.env, NODE_OPTIONS: '--require ./preload.cjs' }
    const id = newId(env)
    const c = startIn(id, env)
    const a = await c.first
    assert.equal(a.preloaded, true, 'the caller itself ran with its NODE_OPTIONS')
    assert.deepEqual([a.outcome, a.stdout], ['created', 'ok\n'])
    assert.equal((await c.exited).code, 0)
  })

  it('passes over a runtime directory that others may write to, or that another user owns', async () => {
    const temp = dirWithMode(path.join(tmp, 't'), 0o700)
    const fallback = path.join(temp, `procvisor-${process.getuid()}`)
    const open = dirWithMode(path.join(tmp, 'open'), 0o777)
    const env = { ...process.env, XDG_RUNTIME_DIR: open, TMPDIR: temp }
    const id = newId(env)
    const c = startIn(id, env)
    assert.equal((await c.first).stdout, 'ok\n')
    assert.equal((await c.exited).code, 0)
    assert.equal(fs.existsSync(path.join(open, 'procvisor')), false, 'no socket directory in a world-writable runtime directory')
    assert.equal(fs.statSync(fallback).mode & 0o777, 0o700)
    assert.equal(path.dirname(socketFor(id, env)), fallback)
    // A private runtime directory is used; one of another user is not.
    const mine = dirWithMode(path.join(tmp, 'mine'), 0o700)
    assert.equal(path.dirname(socketFor(id, { XDG_RUNTIME_DIR: mine, TMPDIR: temp })), path.join(mine, 'procvisor'))
    if (process.getuid() === 0) {
      const theirs = dirWithMode(path.join(tmp, 'theirs'), 0o700)
      fs.chownSync(theirs, 65534, 65534)
      assert.equal(path.dirname(socketFor(id, { XDG_RUNTIME_DIR: theirs, TMPDIR: temp })), fallback)
    }
  })

  it('puts the socket somewhere shorter when the runtime directory would make its path too long', async () => {
    const temp = dirWithMode(path.join(tmp, 't'), 0o700)
    const long = dirWithMode(path.join(tmp, 'r'.repeat(90)), 0o700)
    const env = { ...process.env, XDG_RUNTIME_DIR: long, TMPDIR: temp }
    const id = newId(env)
    const c = startIn(id, env)
    const a = await c.first
    assert.deepEqual([a.outcome, a.stdout], ['created', 'ok\n'])
    assert.equal((await c.exited).code, 0, (await c.exited).err)
    assert.deepEqual(fs.readdirSync(long), [], 'nothing was left in the runtime directory')
    const sock = socketFor(id, env)
    assert.equal(path.dirname(sock), path.join(temp, `procvisor-${process.getuid()}`))
    assert.ok(Buffer.byteLength(sock) <= 107)
    // With the temp directory too long as well, /tmp is the last place.
    const longTemp = dirWithMode(path.join(tmp, 't'.repeat(90)), 0o700)
    assert.equal(path.dirname(socketFor(id, { XDG_RUNTIME_DIR: long, TMPDIR: longTemp })), `/tmp/procvisor-${process.getuid()}`)
    assert.deepEqual(fs.readdirSync(longTemp), [])
  })

  it('puts back a deleted socket (and lock) file: a new start() attaches to the same sandbox, one supervisor runs', async () => {
    const id = newId()
    const wd = path.join(tmp, 'wd')
    const open = () => new NativeLocalSandbox({ id, workingDirectory: wd, persistent: true, timeoutMs: 60000 })
    const sb = open()
    await sb.start()
    const p = await sb.processes.spawn('sleep 300')
    const supervisor = sb.supervisorPid
    const sock = socketFor(id)
    fs.rmSync(sock)
    const again = open()
    assert.equal((await again.start()).outcome, 'connected')
    assert.equal(again.supervisorPid, supervisor)
    assert.deepEqual((await again.processes.list()).map((x) => x.pid), [p.pid])
    // Longer than a supervisor whose socket was replaced took to end itself.
    await sleep(2500)
    assert.ok(alive(supervisor) && alive(Number(p.pid)), 'the sandbox and its process run on')
    assert.deepEqual(supervisorsIn(wd), [supervisor])
    const e = await sb.processes.spawn('echo still')
    assert.equal((await e.wait()).stdout, 'still\n', 'the first connection still works')

    // A temp cleaner that deletes both files: the supervisor puts both back.
    fs.rmSync(sock)
    fs.rmSync(lockPathOf(sock))
    assert.equal(await eventually(() => fs.existsSync(sock) && fs.existsSync(lockPathOf(sock)), 5000), true)
    const third = open()
    assert.equal((await third.start()).outcome, 'connected')
    assert.equal(third.supervisorPid, supervisor)
    assert.deepEqual(supervisorsIn(wd), [supervisor])

    await third.stop()
    assert.equal(await eventually(() => !alive(supervisor) && !alive(Number(p.pid)), 5000), true)
    assert.equal(fs.existsSync(sock), false, 'no socket is left')
    assert.equal(fs.existsSync(lockPathOf(sock)), false, 'no lock file is left')
  })
})
