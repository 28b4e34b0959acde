// Persistent sandboxes: processes that outlive the Node process that started them, under a
// supervisor of their own, found again by id from a later Node process. Real Node children are
// killed with SIGKILL, real servers are waited for, the supervisor is killed, a foreign user is
// refused by the kernel's credentials, and every test ends with no process and no socket left.
import { afterEach, beforeEach, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { execFile, spawnSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import * as fs from 'node:fs'
import * as net from 'node:net'
import * as path from 'node:path'
import { createRequire } from 'node:module'
import { NativeLocalSandbox, SandboxSupervisorLostError, SandboxProtocolError } from 'procvisor/mastra'
import { InvalidProcessOptionError } from 'procvisor'
import { ROOT, alive, eventually, freePort, sleep, tempDir } from './helpers.mjs'
import { child as spawnChild } from './persistent-common.mjs'
import { sandboxMaker } from './backends.mjs'

const require = createRequire(import.meta.url)
const protocol = require('../../lib/persistent/wire/protocol.js')
const { FrameReader } = require('../../lib/persistent/wire/reader.js')
const { Connection } = require('../../lib/persistent/client/client.js')
const { readablePackageCopy } = require('../helpers.js')

let tmp
let made = []
const children = []

const make = sandboxMaker(made, () => ({ workingDirectory: path.join(tmp, 'wd') }))

/** A fresh id, so that no two tests (or runs) share a supervisor. */
const freshId = () => `persist-${randomBytes(6).toString('hex')}`

/** Runs `code` (an ES module) in a new Node process; resolves with its first JSON line. */
const child = (code) => spawnChild(children, code)

const IMPORT = `import { NativeLocalSandbox } from ${JSON.stringify(path.join(ROOT, 'mastra/index.mjs'))}\n`

/** The supervisor's socket of sandbox `id` and whether a file is there. */
const socketOf = (id) => protocol.socketPath(id)

/** Reads events of `stream` until `n` stdout lines are in; returns them with their cursors. */
async function readLines(stream, n) {
  const lines = []
  const reader = stream.getReader()
  while (lines.length < n) {
    const { value, done } = await reader.read()
    if (done) break
    if (value.type !== 'stdout') continue
    for (const line of Buffer.from(value.data).toString().split('\n').filter(Boolean)) lines.push({ line, cursor: value.cursor })
  }
  await reader.cancel()
  return lines
}

beforeEach(() => {
  tmp = tempDir('procvisor-persistent-')
})

afterEach(async () => {
  for (const p of children.splice(0)) if (p.exitCode === null && p.signalCode === null) p.kill('SIGKILL')
  for (const sb of made.splice(0)) {
    await sb._destroy().catch(() => {})
    // A supervisor left running by a failed test (detached, or started by a killed child) is
    // stopped through a fresh connection, so that nothing outlives the test.
    const conn = await Connection.open(socketOf(sb.id)).catch(() => null)
    if (conn) await conn.call('shutdown').catch(() => {})
  }
  fs.rmSync(tmp, { recursive: true, force: true })
})

/** The pids whose parent is `pid`. */
function childrenOf(pid) {
  const out = []
  for (const d of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue
    try {
      const st = fs.readFileSync(`/proc/${d}/stat`, 'utf8')
      if (Number(st.slice(st.lastIndexOf(')') + 2).split(' ')[1]) === pid) out.push(Number(d))
    } catch {}
  }
  return out
}

/**
 * Connects to `sock` as "nobody", from a readable copy of the package at `pkg`: the raw first
 * frame the supervisor sends, and what procvisor's client makes of the socket (it checks the
 * listener's uid too).
 */
function asNobody(pkg, sock) {
  const script = `
    const net = require('node:net')
    const protocol = require(${JSON.stringify(path.join(pkg, 'lib/persistent/wire/protocol.js'))})
    const { FrameReader } = require(${JSON.stringify(path.join(pkg, 'lib/persistent/wire/reader.js'))})
    const { Connection } = require(${JSON.stringify(path.join(pkg, 'lib/persistent/client/client.js'))})
    const s = net.connect(${JSON.stringify(sock)})
    const frames = new FrameReader()
    s.on('connect', () => s.write(protocol.encode(protocol.hello())))
    s.on('data', (d) => {
      const [frame] = frames.push(d)
      if (!frame) return
      s.destroy()
      Connection.open(${JSON.stringify(sock)}).then(
        () => console.log(JSON.stringify({ frame, client: 'connected' })),
        (e) => console.log(JSON.stringify({ frame, client: { name: e.name, code: e.code, message: e.message } })))
    })`
  return spawnSync('setpriv', ['--reuid=65534', '--regid=65534', '--clear-groups', process.execPath, '-e', script], { encoding: 'utf8', cwd: '/', timeout: 20_000 })
}

describe('persistent sandboxes', () => {
  it('survive the SIGKILL of the Node process that started them: reconnect, resume logs from a cursor, waitForPort, kill', async () => {
    const id = freshId()
    const wd = path.join(tmp, 'wd')
    const port = await freePort()
    const server = `node -e "require('http').createServer((q, s) => s.end('ok')).listen(${port}, '127.0.0.1')"`
    const first = child(`${IMPORT}
      const sb = new NativeLocalSandbox({ id: ${JSON.stringify(id)}, workingDirectory: ${JSON.stringify(wd)}, persistent: true, timeoutMs: 60000 })
      const started = await sb.start()
      const counter = await sb.processes.spawn('i=0; while :; do echo n$i; i=$((i+1)); sleep 0.05; done')
      const srv = await sb.processes.spawn(${JSON.stringify(server)})
      // Reads the counter's log up to n4, and keeps the cursor of the last line seen.
      const reader = (await counter.nativeHandle.logs({ follow: true })).getReader()
      let text = '', cursor
      while (!/n4\\n/.test(text)) { const { value } = await reader.read(); if (value.type === 'stdout') { text += Buffer.from(value.data); cursor = value.cursor } }
      console.log(JSON.stringify({ outcome: started.outcome, counter: counter.pid, server: srv.pid, text, cursor, supervisor: sb.supervisorPid }))
      setInterval(() => {}, 1000)`)
    const a = await first.first
    assert.equal(a.outcome, 'created')
    assert.match(a.text, /^n0\nn1\nn2\nn3\nn4\n/)
    first.proc.kill('SIGKILL')
    await first.exited
    assert.ok(alive(Number(a.counter)) && alive(Number(a.server)) && alive(a.supervisor), 'the processes outlived the Node process')

    const sb = make({ id, persistent: true, timeoutMs: 60000 })
    const started = await sb.start()
    assert.equal(started.outcome, 'connected')
    assert.equal(sb.supervisorPid, a.supervisor)
    const listed = await sb.processes.list()
    assert.deepEqual(listed.map((p) => p.pid).sort(), [a.counter, a.server].sort())
    assert.ok(listed.every((p) => p.running))

    const counter = await sb.processes.get(a.counter)
    assert.match(counter.stdout, /^n0\nn1\nn2\nn3\nn4\n/, 'the retained output came back')
    // The log resumes exactly after the cursor the killed Node process saw: no gap, no repeat.
    const last = Number(a.text.trim().split('\n').pop().slice(1))
    const lines = await readLines(await counter.nativeHandle.logs({ since: a.cursor, follow: true }), 20)
    assert.deepEqual(
      lines.map((l) => l.line),
      Array.from({ length: lines.length }, (_, i) => `n${last + 1 + i}`),
    )
    // The same position from a cursor read here resumes the same way.
    const again = await readLines(await counter.nativeHandle.logs({ since: lines[4].cursor, follow: true }), 3)
    assert.equal(again[0].line, lines.find((l, i) => i > 4 && l.cursor !== lines[4].cursor).line)

    const srv = await sb.processes.get(a.server)
    await srv.nativeHandle.waitForPort(port, { timeout: 10_000 })
    const body = await fetch(`http://127.0.0.1:${port}/`).then((r) => r.text())
    assert.equal(body, 'ok')
    assert.equal(await srv.kill(), true)
    const result = await srv.wait()
    assert.equal(result.exitCode, 128)
    assert.equal(result.killed, true)
    assert.equal(await eventually(() => !alive(Number(a.server)), 5000), true)

    // Output written to stdin from here reaches the process; its output comes back here.
    const cat = await sb.processes.spawn('cat')
    await cat.sendStdin('hello\n')
    await cat.closeStdin()
    assert.equal((await cat.wait()).stdout, 'hello\n')

    await sb._stop()
    assert.equal(sb.status, 'stopped')
    assert.equal(await eventually(() => !alive(Number(a.counter)) && !alive(a.supervisor), 5000), true, 'stop() ended everything')
    assert.equal(fs.existsSync(socketOf(id)), false, 'no socket is left')
  })

  it('ends at its lifetime with nobody attached: every process killed, the checkpoint captured, the socket gone', async () => {
    const id = freshId()
    const wd = path.join(tmp, 'wd')
    const checkpoints = path.join(tmp, 'checkpoints')
    const c = child(`${IMPORT}
      const sb = new NativeLocalSandbox({ id: ${JSON.stringify(id)}, workingDirectory: ${JSON.stringify(wd)}, checkpointsDirectory: ${JSON.stringify(checkpoints)}, persistent: true, timeoutMs: 1500, snapshotOnStop: true })
      await sb.start()
      const p = await sb.processes.spawn('echo kept > file.txt; sleep 300 & sleep 300')
      console.log(JSON.stringify({ pid: p.pid, supervisor: sb.supervisorPid, expiresAt: sb.expiresAt.getTime() }))`)
    const a = await c.first
    const exit = await c.exited
    assert.equal(exit.code, 0, `the Node process exits by itself, the sandbox runs on: ${exit.err}`)
    assert.ok(alive(Number(a.pid)) && alive(a.supervisor), 'still running with nobody attached')
    assert.ok(a.expiresAt > Date.now() - 1000 && a.expiresAt <= Date.now() + 1500)
    assert.equal(await eventually(() => !alive(a.supervisor) && !alive(Number(a.pid)), 10_000), true, 'the lifetime ended the supervisor and its processes')
    assert.equal(fs.existsSync(socketOf(id)), false, 'no socket is left')
    const name = fs.readdirSync(checkpoints).find((n) => !n.startsWith('.'))
    assert.ok(name, 'a checkpoint was captured at the end of the lifetime')
    assert.equal(fs.readFileSync(path.join(checkpoints, name, 'file.txt'), 'utf8'), 'kept\n')
  })

  it('a supervisor killed with SIGKILL takes its processes along; the client gets a typed error, then starts anew over the stale socket', async () => {
    const id = freshId()
    const sb = make({ id, persistent: true, timeoutMs: 60000 })
    await sb.start()
    const tree = await sb.processes.spawn('sleep 300 & sleep 300 & wait')
    const waiting = tree.wait()
    const supervisor = sb.supervisorPid
    await sleep(200)
    const members = childrenOf(Number(tree.pid))
    assert.equal(members.length, 2)
    process.kill(supervisor, 'SIGKILL')
    await assert.rejects(waiting, (e) => e instanceof SandboxSupervisorLostError && e.code === 'SANDBOX_SUPERVISOR_LOST')
    assert.equal(await eventually(() => [Number(tree.pid), ...members].every((p) => !alive(p)), 5000), true, 'no process outlived the supervisor')
    await assert.rejects(sb.processes.list(), (e) => e instanceof SandboxSupervisorLostError)
    await assert.rejects(tree.kill(), SandboxSupervisorLostError)
    assert.equal(fs.existsSync(socketOf(id)), true, 'the dead supervisor left its socket file')

    const restarted = await sb.start()
    // The working directory is there: Mastra's outcome for it, with a supervisor started anew.
    assert.deepEqual(restarted, { outcome: 'connected' })
    assert.equal(sb.supervisor, 'started', 'a new supervisor')
    assert.notEqual(sb.supervisorPid, supervisor)
    assert.deepEqual(await sb.processes.list(), [])
    const p = await sb.processes.spawn('echo again')
    assert.equal((await p.wait()).stdout, 'again\n')
    const next = sb.supervisorPid
    await sb._stop()
    assert.equal(await eventually(() => !alive(next), 5000), true)
    assert.equal(fs.existsSync(socketOf(id)), false)
  })

  it('thirty processes followed at once: no Node warning, and each wait() rejects typed when the supervisor dies', async () => {
    const warnings = []
    const onWarning = (w) => warnings.push(`${w.name}: ${w.message}`)
    process.on('warning', onWarning)
    try {
      const sb = make({ id: freshId(), persistent: true, timeoutMs: 60000 })
      await sb.start()
      const handles = await Promise.all(Array.from({ length: 30 }, () => sb.processes.spawn('sleep 300')))
      const waits = handles.map((h) => h.wait().then(() => 'resolved', (e) => e))
      process.kill(sb.supervisorPid, 'SIGKILL')
      for (const r of await Promise.all(waits)) assert.ok(r instanceof SandboxSupervisorLostError, String(r))
      // Warnings are emitted on the next turn.
      await new Promise((r) => setImmediate(r))
      assert.deepEqual(warnings, [])
    } finally {
      process.off('warning', onWarning)
    }
  })

  it('two Node processes attached at once see the same processes and output', async () => {
    const id = freshId()
    const sb = make({ id, persistent: true, timeoutMs: 60000 })
    await sb.start()
    const echo = await sb.processes.spawn('while read l; do echo "got $l"; done')
    await echo.sendStdin('one\n')
    await eventually(() => echo.stdout.includes('got one'), 5000)
    const other = child(`${IMPORT}
      const sb = new NativeLocalSandbox({ id: ${JSON.stringify(id)}, workingDirectory: ${JSON.stringify(path.join(tmp, 'wd'))}, persistent: true })
      const { outcome } = await sb.start()
      const list = await sb.processes.list()
      const h = await sb.processes.get(list[0].pid)
      const before = h.stdout
      await h.sendStdin('two\\n')
      while (!h.stdout.includes('got two')) await new Promise((r) => setTimeout(r, 10))
      console.log(JSON.stringify({ outcome, list, before, after: h.stdout }))
      await sb.detach()`)
    const b = await other.first
    assert.equal(b.outcome, 'connected')
    assert.deepEqual(b.list, [{ pid: echo.pid, command: echo.command, running: true }])
    assert.equal(b.before, 'got one\n')
    assert.equal(b.after, 'got one\ngot two\n')
    assert.equal((await other.exited).code, 0)
    // What the other Node process wrote reached this one's handle too.
    assert.equal(await eventually(() => echo.stdout === 'got one\ngot two\n', 5000), true, echo.stdout)
    await echo.closeStdin()
    assert.equal((await echo.wait()).exitCode, 0)
    await sb._stop()
  })

  it('two Node processes starting one new sandbox at the same moment share one supervisor', async () => {
    const id = freshId()
    const code = `${IMPORT}
      const sb = new NativeLocalSandbox({ id: ${JSON.stringify(id)}, workingDirectory: ${JSON.stringify(path.join(tmp, 'wd'))}, persistent: true, timeoutMs: 60000 })
      const { outcome } = await sb.start()
      const p = await sb.processes.spawn('echo ' + process.pid)
      await p.wait()
      console.log(JSON.stringify({ outcome, supervisor: sb.supervisorPid }))
      await sb.detach()`
    const both = await Promise.all([child(code), child(code)].map((c) => c.first))
    assert.equal(both[0].supervisor, both[1].supervisor, JSON.stringify(both))
    const sb = make({ id, persistent: true })
    assert.equal((await sb.start()).outcome, 'connected')
    assert.equal(sb.supervisorPid, both[0].supervisor)
    assert.equal((await sb.processes.list()).length, 2)
    await sb._stop()
    assert.equal(await eventually(() => !alive(both[0].supervisor), 5000), true)
  })

  it('refuses a client of another user by its kernel credentials, even with the directory opened up', async (t) => {
    if (process.getuid() !== 0) return t.skip('NOT RUN: needs root to run a client as another user')
    if (spawnSync('setpriv', ['--version']).status !== 0) return t.skip('NOT RUN: needs setpriv (util-linux) to run a client as nobody')
    const id = freshId()
    const sb = make({ id, persistent: true, timeoutMs: 60000 })
    await sb.start()
    const sock = socketOf(id)
    const dir = path.dirname(sock)
    // Opened up by mistake: the directory and the socket let anyone connect.
    fs.chmodSync(dir, 0o711)
    fs.chmodSync(sock, 0o666)
    let r
    try {
      r = asNobody(readablePackageCopy(t), sock)
    } finally {
      fs.chmodSync(dir, 0o700)
    }
    assert.equal(r.status, 0, r.stderr)
    const out = JSON.parse(r.stdout.trim())
    assert.equal(out.frame.t, 'refused')
    assert.equal(out.frame.code, 'SANDBOX_ACCESS_DENIED')
    assert.match(out.frame.message, /not uid 65534/)
    assert.equal(out.client.name, 'SandboxAccessError')
    assert.equal(out.client.code, 'SANDBOX_ACCESS_DENIED')
    // The sandbox served nothing to it and runs on for its own user.
    const p = await sb.processes.spawn('echo mine')
    assert.equal((await p.wait()).stdout, 'mine\n')
    await sb._stop()
  })

  it('a client and a supervisor of different protocol versions refuse each other', async () => {
    // A client speaking a later protocol, against a real supervisor.
    const id = freshId()
    const sb = make({ id, persistent: true, timeoutMs: 60000 })
    await sb.start()
    const refusal = await new Promise((resolve, reject) => {
      const s = net.connect(socketOf(id))
      const frames = new FrameReader()
      s.on('connect', () => s.write(protocol.encode({ t: 'hello', protocol: protocol.PROTOCOL + 1, version: '99.0.0' })))
      s.on('data', (d) => {
        const [m] = frames.push(d)
        if (m) resolve(m)
      })
      s.on('error', reject)
    })
    assert.equal(refusal.t, 'refused')
    assert.equal(refusal.code, 'SANDBOX_PROTOCOL_MISMATCH')
    assert.match(refusal.message, new RegExp(`protocol ${protocol.PROTOCOL + 1}`))
    await sb._stop()

    // A supervisor speaking a later protocol, against the real client: the supervisor is one of
    // a later version that cannot run here, so its hello is spoken by a small server.
    const id2 = freshId()
    const accepted = []
    const later = net.createServer((s) => {
      accepted.push(s)
      s.write(protocol.encode({ t: 'hello', protocol: protocol.PROTOCOL + 1, version: '99.0.0', sandbox: { id: id2 } }))
    })
    await new Promise((r) => later.listen(socketOf(id2), r))
    try {
      const other = make({ id: id2, persistent: true })
      await assert.rejects(other.start(), (e) => e instanceof SandboxProtocolError && e.code === 'SANDBOX_PROTOCOL_MISMATCH' && new RegExp(`this one speaks protocol ${protocol.PROTOCOL}`).test(e.message))
    } finally {
      for (const c of accepted) c.destroy()
      await new Promise((r) => later.close(r))
    }
    assert.equal(accepted.length, 1, 'the client connected once and gave up')
    assert.equal(fs.existsSync(socketOf(id2)), false)
  })

  it('detach() leaves the processes running for a later start(); bad options are typed errors', async () => {
    assert.throws(() => new NativeLocalSandbox({ persistent: 'yes' }), InvalidProcessOptionError)
    assert.equal(new NativeLocalSandbox({ id: freshId(), persistent: true }).timeoutMs, 300_000, 'a persistent sandbox always has a lifetime')
    await assert.rejects(new NativeLocalSandbox({ workingDirectory: path.join(tmp, 'x') }).detach(), InvalidProcessOptionError)

    const id = freshId()
    const sb = make({ id, persistent: true, timeoutMs: 60000 })
    await sb.start()
    const p = await sb.processes.spawn('sleep 300')
    await sb.detach()
    assert.equal(sb.supervisorPid, undefined)
    await assert.rejects(p.kill(), SandboxSupervisorLostError)
    assert.equal(alive(Number(p.pid)), true, 'detaching stopped nothing')
    // Another working directory under the same id is another sandbox: refused.
    const elsewhere = make({ id, persistent: true, workingDirectory: path.join(tmp, 'elsewhere') })
    await assert.rejects(elsewhere.start(), (e) => e instanceof InvalidProcessOptionError && /one id is one sandbox/.test(e.message))
    assert.equal((await sb.start()).outcome, 'connected')
    assert.deepEqual((await sb.processes.list()).map((x) => x.pid), [p.pid])
    assert.equal(await sb.processes.kill(p.pid), true)
    assert.equal(alive(Number(p.pid)), false)
    await sb._stop()
    assert.equal(fs.existsSync(socketOf(id)), false)
  })
})
