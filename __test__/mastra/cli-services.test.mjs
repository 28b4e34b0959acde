// `procvisor start`, `restart` and `describe` against real persistent sandboxes started by a Node
// process of their own, with real servers answering on real ports.
import { describe, it, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import * as fs from 'node:fs'
import * as path from 'node:path'
import { createRequire } from 'node:module'
import { ROOT, alive, eventually, freePort, tempDir } from './helpers.mjs'
import { startElsewhere, freshId, sweep } from './persistent-common.mjs'
import { privateSockets } from './backends.mjs'

const require = createRequire(import.meta.url)
const { ProcessManager, InvalidProcessOptionError } = require('../../index.js')

privateSockets()
const BIN = path.join(ROOT, 'bin/procvisor.js')
const children = []
const ids = []
let tmp

function cli(...args) {
  return new Promise((resolve) => {
    execFile(process.execPath, [BIN, ...args], { encoding: 'utf8' }, (error, out, err) => resolve({ status: error ? error.code : 0, out, err }))
  })
}

async function sandbox(script = 'console.log(JSON.stringify({}))') {
  const id = freshId()
  ids.push(id)
  const c = startElsewhere(children, { id, workingDirectory: path.join(tmp, id) }, script)
  const first = await c.first
  await c.exited
  return { id, ...first }
}

/** An HTTP server that answers with its pid; it listens after `delayMs`; SIGTERM ends it with exit 0. */
const server = (port, delayMs = 0) =>
  `process.on('SIGTERM', () => process.exit(0)); setTimeout(() => require('http').createServer((q, s) => s.end(String(process.pid))).listen(${port}, '127.0.0.1'), ${delayMs})`

const pidAt = async (port) => Number(await (await fetch(`http://127.0.0.1:${port}/`)).text())

before(() => {
  tmp = tempDir('procvisor-cli-services-')
})
after(async () => {
  for (const id of ids) await sweep(id)
  for (const c of children) c.kill('SIGKILL')
  fs.rmSync(tmp, { recursive: true, force: true })
})

describe('procvisor start', () => {
  it('runs the argv after -- without a shell, prints its pid, and --ready-port returns once the port serves', async () => {
    const { id } = await sandbox()
    const port = await freePort()
    const started = await cli('start', id, '--ready-port', String(port), '--env', 'GREETING=hi there', '--json', '--', 'node', '-e', server(port, 700))
    assert.equal(started.status, 0, started.err)
    const { pid, ready } = JSON.parse(started.out)
    assert.equal(ready, true)
    // Ready means it serves now, with no retry on our side.
    assert.equal(await pidAt(port), Number(pid))

    const ps = JSON.parse((await cli('ps', id, '--json')).out)
    const row = ps.processes.find((p) => p.pid === pid)
    assert.equal(row.state, 'running')
    assert.match(row.command, /^node -e '/)

    // No shell: `$HOME` and `;` reach the program as they are.
    const echoed = await cli('start', id, '--', 'node', '-e', 'console.log(process.argv[1], process.env.GREETING)', '$HOME;', '--flag')
    assert.equal(echoed.status, 0, echoed.err)
    assert.match(echoed.out, /^[1-9][0-9]*\n$/)
    await eventually(async () => (await cli('logs', id, echoed.out.trim())).out === '$HOME; undefined\n', 5000)
  })

  it('fails with exit 1 when the process exits before its port serves, and with 2 on a bad command line before anything runs', async () => {
    const { id } = await sandbox()
    const port = await freePort()
    const t0 = Date.now()
    const early = await cli('start', id, '--ready-port', String(port), '--', 'node', '-e', 'setTimeout(() => process.exit(3), 300)')
    assert.equal(early.status, 1)
    assert.match(early.err, /^procvisor: process \d+ exited \(code 3\) before port \d+ accepted a connection/)
    assert.ok(Date.now() - t0 < 10_000, 'not the whole deadline')

    const late = await cli('start', id, '--ready-port', String(port), '--ready-timeout', '500', '--', 'sleep', '30')
    assert.equal(late.status, 1)
    assert.match(late.err, /did not accept a connection within 500 ms/)

    for (const bad of [
      ['start', id, 'sleep', '30'],
      ['start', id, '--'],
      ['start', id, '--restart', 'sometimes', '--', 'sleep', '30'],
      ['start', id, '--ready-port', '70000', '--', 'sleep', '30'],
      ['start', id, '--env', 'NOVALUE', '--', 'sleep', '30'],
    ]) {
      const r = await cli(...bad)
      assert.equal(r.status, 2, `${bad.join(' ')}: ${r.err}`)
      assert.match(r.err, /^procvisor: /)
    }
    const listed = JSON.parse((await cli('ps', id, '--json')).out).processes
    assert.equal(listed.length, 2, 'only the two started above')

    const help = await cli('start', '--help')
    assert.equal(help.status, 0)
    assert.match(help.out, /^usage: procvisor start <sandbox>/)
  })
})

describe('procvisor restart', () => {
  it('starts a new run of a service now, keeping its policy and counting the restart, even after an exit the policy would not restart', async () => {
    const { id } = await sandbox()
    const port = await freePort()
    // on-failure, and the server exits 0 on SIGTERM: the policy alone would let it end there.
    const started = await cli('start', id, '--restart', 'on-failure', '--ready-port', String(port), '--', 'node', '-e', server(port))
    assert.equal(started.status, 0, started.err)
    const pid = started.out.trim()
    const first = await pidAt(port)

    const restarted = await cli('restart', id, pid)
    assert.equal(restarted.status, 0, restarted.err)
    assert.match(restarted.out, /\(1 restart\)/)
    assert.equal(alive(first), false, 'the first run is gone')
    const second = await eventually(async () => pidAt(port).catch(() => false), 10_000)
    assert.notEqual(second, first)

    // The pid `ps` lists for the service now (its first run's, or its current run's).
    const listed = JSON.parse((await cli('ps', id, '--json')).out).processes[0].pid
    const d = JSON.parse((await cli('describe', id, listed, '--json')).out)
    assert.deepEqual([d.state, d.restarts, d.restart.policy, d.lastExit.code], ['running', 1, 'on-failure', 0])

    // A kill still ends it for good.
    assert.equal((await cli('kill', id, listed)).status, 0)
    await eventually(async () => JSON.parse((await cli('describe', id, listed, '--json')).out).state === 'exited', 10_000)
    const again = await cli('restart', id, listed)
    assert.equal(again.status, 1)
    assert.match(again.err, /has already exited/)
  })

  it('refuses a process without a restart policy, which runs on', async () => {
    const { id } = await sandbox()
    const started = await cli('start', id, '--', 'sleep', '30')
    const pid = started.out.trim()
    const r = await cli('restart', id, pid)
    assert.equal(r.status, 1)
    assert.match(r.err, /without a restart policy/)
    assert.equal(alive(Number(pid)), true)
  })

  it('process.restart() of the Processes API: a new run now, counted; refused without restart', async () => {
    const pm = new ProcessManager()
    try {
      const svc = await pm.exec(['sleep', '30'], { restart: { policy: 'on-failure', backoffMs: { initial: 60_000 } } })
      const before = svc.pid
      const status = await svc.restart()
      assert.deepEqual([status.state, status.restarts], ['running', 1])
      assert.notEqual(status.pid, before, 'a new run, without the 60 s backoff')
      assert.equal(alive(before), false)
      const once = await pm.exec(['sleep', '30'])
      await assert.rejects(once.restart(), InvalidProcessOptionError)
      assert.equal((await once.status()).state, 'running')
    } finally {
      await pm.close()
    }
  })
})

describe('procvisor describe', () => {
  it('shows the command, cwd, env names without values, policy, probes with their verdicts, and usage', async () => {
    const { id } = await sandbox(`const port = ${await freePort()}
const p = await sb.processes.spawn('node -e "require(\\'http\\').createServer((q, s) => s.end()).listen(' + port + ')"', {
  env: { SECRET_TOKEN: 'hunter2' }, restart: { policy: 'always' }, readiness: { port, periodMs: 100 } })
console.log(JSON.stringify({ pid: p.pid }))`)
    const list = JSON.parse((await cli('ps', id, '--json')).out).processes
    const pid = list[0].pid
    await eventually(async () => JSON.parse((await cli('describe', id, pid, '--json')).out).readiness.ready === true, 10_000)
    const d = JSON.parse((await cli('describe', id, pid, '--json')).out)
    assert.ok(d.env.includes('SECRET_TOKEN'))
    assert.equal(d.cwd, path.join(tmp, id))
    assert.equal(d.restart.policy, 'always')
    assert.equal(d.restarts, 0)
    assert.ok(d.uptimeMs >= 0)
    const text = await cli('describe', id, pid)
    assert.equal(text.status, 0, text.err)
    assert.doesNotMatch(text.out + JSON.stringify(d), /hunter2/, 'values never shown')
    assert.match(text.out, /^readiness\s+port \d+: true$/m)
    assert.match(text.out, /^restart\s+always$/m)

    const none = await cli('describe', id, '99999999')
    assert.equal(none.status, 1)
    assert.match(none.err, /has no process 99999999/)
  })
})
