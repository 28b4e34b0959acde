// `procvisor start`, `restart` and `describe` against real persistent sandboxes started by a Node
// process of their own, with real servers answering on real ports.
import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import * as fs from 'node:fs'
import * as path from 'node:path'
import { createRequire } from 'node:module'
import { alive, eventually, freePort } from './helpers.mjs'
import { procvisor } from './persistent-common.mjs'
import { privateSockets, startedElsewhere } from './backends.mjs'

const require = createRequire(import.meta.url)
const { ProcessManager, InvalidProcessOptionError } = require('../../index.js')

privateSockets()
const elsewhere = startedElsewhere('procvisor-cli-services-')
const cli = procvisor

/** A fresh sandbox started from a Node process of its own running `script`; resolves with its id and what it printed. */
const sandbox = (script, options) => elsewhere.startIn(undefined, script, options)

/** An HTTP server that answers with its pid; it listens after `delayMs`; SIGTERM ends it with exit 0. */
const server = (port, delayMs = 0) =>
  `process.on('SIGTERM', () => process.exit(0)); setTimeout(() => require('http').createServer((q, s) => s.end(String(process.pid))).listen(${port}, '127.0.0.1'), ${delayMs})`

const pidAt = async (port) => Number(await (await fetch(`http://127.0.0.1:${port}/`)).text())

describe('procvisor start', () => {
  it('runs the argv after -- without a shell, prints its pid, and --ready-port returns once the port serves', async () => {
    const { id } = await sandbox()
    const port = await freePort()
    const started = await cli('start', id, '--ready-port', String(port), '--json', '--', 'node', '-e', server(port, 700))
    assert.equal(started.status, 0, started.err)
    const { pid, ready } = JSON.parse(started.out)
    assert.equal(ready, true)
    // Ready means it serves now, with no retry on our side.
    assert.equal(await pidAt(port), Number(pid))

    const ps = JSON.parse((await cli('ps', id, '--json')).out)
    const row = ps.processes.find((p) => p.pid === pid)
    assert.equal(row.state, 'running')
    assert.match(row.command, /^node -e '/)

    // No shell: `$HOME` and `;` reach the program as they are; --env reaches its environment.
    const echoed = await cli('start', id, '--env', 'GREETING=hi there', '--', 'node', '-e', 'console.log(process.argv[1], process.env.GREETING)', '$HOME;', '--flag')
    assert.equal(echoed.status, 0, echoed.err)
    assert.match(echoed.out, /^[1-9][0-9]*\n$/)
    await eventually(async () => (await cli('logs', id, echoed.out.trim())).out === '$HOME; hi there\n', 5000)

    // --pty: on a terminal of its own, which attach reaches.
    const onPty = (await cli('start', id, '--pty', '--', 'sh', '-c', 'tty; sleep 30')).out.trim()
    await eventually(async () => /^\/dev\/pts\/\d+/.test((await cli('logs', id, onPty)).out), 5000)
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

describe('procvisor start --name', () => {
  it('gives the process a name that ps shows and the other commands take; a taken name is refused, a bad one is a usage error', async () => {
    const { id } = await sandbox()
    const started = await cli('start', id, '--name', 'ticker', '--json', '--', 'sh', '-c', 'echo tick; sleep 30')
    assert.equal(started.status, 0, started.err)
    const { pid, name } = JSON.parse(started.out)
    assert.equal(name, 'ticker')
    assert.equal(JSON.parse((await cli('ps', id, '--json')).out).processes.find((p) => p.pid === pid).name, 'ticker')
    assert.equal(JSON.parse((await cli('describe', id, 'ticker', '--json')).out).pid, pid)
    await eventually(async () => (await cli('logs', id)).out === 'ticker | tick\n', 5000)

    const taken = await cli('start', id, '--name', 'ticker', '--', 'sleep', '30')
    assert.equal(taken.status, 1)
    assert.match(taken.err, /ticker/)
    const bad = await cli('start', id, '--name', '123', '--', 'sleep', '30')
    assert.equal(bad.status, 2)
    assert.match(bad.err, /--name must be/)
    assert.equal(JSON.parse((await cli('ps', id, '--json')).out).processes.length, 1, 'neither started')
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
    const listed = async () => JSON.parse((await cli('ps', id, '--json')).out).processes[0].pid
    const d = JSON.parse((await cli('describe', id, await listed(), '--json')).out)
    assert.deepEqual([d.state, d.restarts, d.restart.policy, d.lastExit.code], ['running', 1, 'on-failure', 0])

    // A kill still ends it for good.
    assert.equal((await cli('kill', id, await listed())).status, 0)
    await eventually(async () => {
      const r = await cli('describe', id, await listed(), '--json')
      assert.equal(r.status, 0, r.err)
      return JSON.parse(r.out).state === 'exited'
    }, 10_000)
    const again = await cli('restart', id, await listed())
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
      // In a backoff of a minute: the next run starts now, and the restart already counted stays one.
      const dir = fs.mkdtempSync(path.join(elsewhere.dir, 'backoff-'))
      const flaky = await pm.exec(['sh', '-c', '[ -e ran ] && exec sleep 30; touch ran; exit 1'], { cwd: dir, restart: { policy: 'on-failure', backoffMs: { initial: 60_000 } } })
      await eventually(async () => (await flaky.status()).state === 'backoff', 5000)
      const t0 = Date.now()
      const resumed = await flaky.restart()
      assert.deepEqual([resumed.state, resumed.restarts], ['running', 1])
      assert.ok(Date.now() - t0 < 5000)
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
    assert.equal(d.cwd, path.join(elsewhere.dir, id))
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

describe('procvisor ps and logs across processes', () => {
  it('ps shows the memory in use now, CPU% and uptime, and --json carries them', async () => {
    const { id } = await sandbox()
    // 64 MiB touched, then idle; a second one that only spins.
    const big = (await cli('start', id, '--', 'node', '-e', 'globalThis.b = Buffer.alloc(64 << 20, 1); setInterval(() => {}, 1000)')).out.trim()
    const spin = (await cli('start', id, '--', 'node', '-e', 'for (;;) {}')).out.trim()
    await new Promise((resolve) => setTimeout(resolve, 1500))
    const { processes } = JSON.parse((await cli('ps', id, '--json')).out)
    const [b, sp] = [big, spin].map((pid) => processes.find((p) => p.pid === pid))
    assert.ok(b.memoryBytes >= 64 << 20, `memoryBytes ${b.memoryBytes}`)
    assert.ok(b.uptimeMs >= 1000 && b.uptimeMs < 60_000, `uptimeMs ${b.uptimeMs}`)
    if (sp.cpuTimeMs !== undefined) {
      // Under cgroup containment: one spinning core is near 100%, the idle one near 0.
      assert.ok(sp.cpuPercent > 50, `spinning at ${sp.cpuPercent}%`)
      assert.ok(b.cpuPercent < 50, `idle at ${b.cpuPercent}%`)
    }
    const table = await cli('ps', id)
    assert.match(table.out, /^PID\s.*\bCPU%\s+MEM\s+UPTIME\b/m)
    assert.match(table.out, new RegExp(`^${big}\\s.*\\s(6[4-9]|[7-9][0-9]|1[0-9][0-9])\\.[0-9]MiB\\s+[0-9]+s\\s`, 'm'))
  })

  it('logs without a pid prints the lines of every process, each prefixed with its pid; --follow follows them all to their ends', async () => {
    const { id } = await sandbox()
    const a = (await cli('start', id, '--', 'sh', '-c', 'echo a1; sleep 0.5; printf a2; echo a3 >&2')).out.trim()
    const b = (await cli('start', id, '--', 'sh', '-c', 'sleep 0.2; echo b1; sleep 0.5; echo b2')).out.trim()
    const all = await cli('logs', id, '--follow')
    assert.equal(all.status, 0, all.err)
    const w = Math.max(a.length, b.length)
    const tag = (pid) => `${pid.padEnd(w)} | `
    assert.deepEqual(all.out.split('\n').filter(Boolean).sort(), [`${tag(a)}a1`, `${tag(a)}a2`, `${tag(b)}b1`, `${tag(b)}b2`].sort())
    assert.ok(all.out.indexOf(`${tag(a)}a1`) < all.out.indexOf(`${tag(b)}b1`), 'in the order written')
    assert.equal(all.err, `${tag(a)}a3\n`)
    const bad = await cli('logs', id, '--since', 'pvc1.x')
    assert.equal(bad.status, 2)
    assert.match(bad.err, /--since needs a <pid>/)
  })
})

describe('a sandbox without a lifetime', () => {
  it('timeoutMs: 0 gives none: ls says never and --json null; without timeoutMs it is 5 minutes', async () => {
    const forever = await sandbox(`console.log(JSON.stringify({ expiresAt: sb.expiresAt ?? null, info: (await sb.getInfo()).metadata?.expiresAt ?? null }))`, ', timeoutMs: 0')
    assert.deepEqual([forever.expiresAt, forever.info], [null, null])
    const usual = await sandbox()
    const listed = JSON.parse((await cli('ls', '--json')).out)
    const [f, u] = [forever.id, usual.id].map((id) => listed.find((s) => s.id === id))
    assert.equal(f.expiresAt, null)
    assert.equal(Date.parse(u.expiresAt) - Date.parse(u.startedAt), 300_000)
    const table = await cli('ls')
    assert.match(table.out, new RegExp(`^${forever.id}\\s+\\d+\\s+\\S+ \\S+\\s+never\\s`, 'm'))
    // Its supervisor serves on: a process started now runs.
    const started = await cli('start', forever.id, '--', 'sleep', '30')
    assert.equal(started.status, 0, started.err)
    assert.equal(alive(Number(started.out.trim())), true)
  })

  it('outlives the lifetime a sandbox started beside it with timeoutMs has, its service still running', async () => {
    const forever = await sandbox('console.log(JSON.stringify({}))', ', timeoutMs: 0')
    const brief = await sandbox('console.log(JSON.stringify({}))', ', timeoutMs: 1500')
    const service = await cli('start', forever.id, '--restart', 'always', '--', 'sleep', '300')
    assert.equal(service.status, 0, service.err)
    const listedIds = async () => JSON.parse((await cli('ls', '--json')).out).map((s) => s.id)
    assert.ok(await eventually(async () => !(await listedIds()).includes(brief.id), 10_000), 'the sandbox with a lifetime ended')
    assert.ok((await listedIds()).includes(forever.id), 'the one without a lifetime is still there')
    assert.equal(alive(Number(service.out.trim())), true, 'and its service still runs')
  })
})

describe('procvisor ps and probes', () => {
  it("READY says each process's readiness verdict, and ps --json carries ready and healthy", async () => {
    const [up, never] = [await freePort(), await freePort()]
    const { id, a, b } = await sandbox(
      `const a = await sb.processes.spawn(${JSON.stringify(`node -e ${JSON.stringify(server(up))}`)}, { name: 'served', readiness: { port: ${up}, periodMs: 100 } })
const b = await sb.processes.spawn('sleep 300', { name: 'silent', readiness: { port: ${never}, periodMs: 100 } })
console.log(JSON.stringify({ a: a.pid, b: b.pid }))`,
    )
    const rows = async () => JSON.parse((await cli('ps', id, '--json')).out).processes
    assert.ok(await eventually(async () => (await rows()).find((p) => p.pid === a)?.ready === true, 10_000), 'the server becomes ready')
    const silent = (await rows()).find((p) => p.pid === b)
    assert.equal(silent.ready, false)
    assert.equal(silent.healthy, undefined, 'no liveness probe, no verdict')
    const table = (await cli('ps', id)).out
    assert.match(table.split('\n')[0], /\bREADY\b/)
    assert.match(table, new RegExp(`^${a}\\s+served\\s+running\\s+ready\\s`, 'm'))
    assert.match(table, new RegExp(`^${b}\\s+silent\\s+running\\s+not ready\\s`, 'm'))
  })
})
