// The `procvisor` command line against real persistent sandboxes, each started by a Node process
// of its own that then exits: what the command line sees is what the supervisors serve.
import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import * as fs from 'node:fs'
import * as path from 'node:path'
import { createRequire } from 'node:module'
import { ROOT, alive, eventually } from './helpers.mjs'
import { BIN, procvisor, freshId, socketFor } from './persistent-common.mjs'
import { privateSockets, startedElsewhere } from './backends.mjs'

const require = createRequire(import.meta.url)
const { ProcessManager } = require('../../index.js')

privateSockets()
const elsewhere = startedElsewhere('procvisor-cli-')
const cli = procvisor

/** Starts sandbox `id` from a Node process of its own running `script` (after start()); resolves with what it printed. */
const startIn = (id, script, options) => elsewhere.startIn(id, script, options)

describe('procvisor, the command line', () => {
  it('ls --json and ps --json list the sandboxes of other Node processes and their processes', async () => {
    const a = freshId()
    const b = freshId()
    const first = await startIn(a, `const s = await sb.processes.spawn('sleep 60'); const e = await sb.processes.spawn('exit 3'); await e.wait()
const svc = await sb.processes.spawn('exit 1', { restart: { policy: 'on-failure', maxRestarts: 2, backoffMs: { initial: 10 } } }); await svc.wait()
const t = await sb.terminals.create({ command: 'sh' })
console.log(JSON.stringify({ sleep: s.pid, exited: e.pid, service: svc.pid, terminal: t.id, terminalPid: t.pid, supervisor: sb.supervisorPid }))`)
    await startIn(b, `console.log(JSON.stringify({ supervisor: sb.supervisorPid }))`)

    const ls = await cli('ls', '--json')
    assert.equal(ls.status, 0, ls.err)
    const listed = JSON.parse(ls.out)
    const mine = listed.filter((s) => s.id === a || s.id === b)
    assert.deepEqual(mine.map((s) => s.id).sort(), [a, b].sort())
    const sa = mine.find((s) => s.id === a)
    assert.equal(sa.workingDirectory, first.wd)
    assert.equal(sa.supervisorPid, first.supervisor)
    assert.equal(sa.processes, 3)
    assert.equal(sa.terminals, 1)
    assert.ok(Date.parse(sa.expiresAt) > Date.parse(sa.startedAt))

    const ps = await cli('ps', a, '--json')
    assert.equal(ps.status, 0, ps.err)
    const { id, processes, terminals } = JSON.parse(ps.out)
    assert.deepEqual(terminals, [{ id: first.terminal, pid: first.terminalPid, state: 'running' }])
    assert.equal(id, a)
    const sleeping = processes.find((p) => p.pid === first.sleep)
    assert.equal(sleeping.state, 'running')
    assert.equal(sleeping.command, 'sleep 60')
    assert.equal(sleeping.exitCode, undefined)
    assert.ok(!Number.isNaN(Date.parse(sleeping.startedAt)))
    const ended = processes.find((p) => p.pid === first.exited)
    assert.deepEqual([ended.state, ended.exitCode], ['exited', 3])
    const service = processes.find((p) => p.pid === first.service)
    assert.deepEqual([service.state, service.exitCode, service.restarts, service.gaveUp], ['exited', 1, 2, true], 'a service that gave up')

    const table = await cli('ls')
    assert.match(table.out, new RegExp(`^ID\\s+SUPERVISOR.*\\n(.*\\n)*${a}\\s+${first.supervisor}\\s`, 'm'))
  })

  it('logs prints the bytes in order with a cursor, --since resumes exactly, --follow follows to the end', async () => {
    const id = freshId()
    // 400 numbered lines on stdout (a pause after the first 200), every tenth also on stderr.
    const started = await startIn(
      id,
      `const p = await sb.processes.spawn('i=1; while [ $i -le 400 ]; do echo "out $i"; [ $((i % 10)) -eq 0 ] && echo "err $i" >&2; [ $i -eq 200 ] && sleep 1; i=$((i+1)); done')
console.log(JSON.stringify({ pid: p.pid }))`,
    )
    const expected = Array.from({ length: 400 }, (_, i) => `out ${i + 1}\n`).join('')
    await eventually(async () => (await cli('logs', id, started.pid, '--stdout')).out.includes('out 200\n'), 5000)
    const head = await cli('logs', id, started.pid, '--stdout')
    assert.equal(head.status, 0, head.err)
    const cursor = /^cursor: (\S+)$/m.exec(head.err)[1]
    const rest = await cli('logs', id, started.pid, '--stdout', '--follow', '--since', cursor)
    assert.equal(rest.status, 0, rest.err)
    assert.equal(head.out + rest.out, expected, 'no gap, no repeat')
    assert.match(rest.err, /^cursor: \S+$/m)

    const whole = await cli('logs', id, started.pid, '--stderr')
    assert.equal(whole.out, '')
    assert.equal(whole.err.replace(/^cursor: .*\n/m, ''), Array.from({ length: 40 }, (_, i) => `err ${(i + 1) * 10}\n`).join(''))

    const bad = await cli('logs', id, started.pid, '--since', 'pvc1.garbage')
    assert.equal(bad.status, 1)
    assert.match(bad.err, /^procvisor: --since: invalid process cursor/)
    assert.equal(bad.err.trim().split('\n').length, 1, 'one line')
  })

  it('kill, stop and destroy do what they say, and leave no process, socket or checkpoint behind', async () => {
    const id = freshId()
    const checkpoints = path.join(elsewhere.dir, `${id}-checkpoints`)
    const s = await startIn(
      id,
      `const a = await sb.processes.spawn('sleep 60'); const b = await sb.processes.spawn('sleep 61')
await sb.executeCommand('echo kept > file.txt')
console.log(JSON.stringify({ a: a.pid, b: b.pid, supervisor: sb.supervisorPid }))`,
      `, snapshotOnStop: true, checkpointsDirectory: ${JSON.stringify(checkpoints)}`,
    )
    const killed = await cli('kill', id, s.a, '--signal', 'SIGKILL')
    assert.equal(killed.status, 0, killed.err)
    assert.equal(await eventually(() => !alive(Number(s.a)), 5000), true)
    assert.equal(alive(Number(s.b)), true, 'only the one named')

    const stopped = await cli('stop', id)
    assert.equal(stopped.status, 0, stopped.err)
    assert.equal(await eventually(() => !alive(Number(s.b)) && !alive(s.supervisor), 5000), true)
    assert.equal(fs.existsSync(socketFor(id)), false, 'no socket left')
    assert.equal(fs.readFileSync(path.join(checkpoints, id, 'file.txt'), 'utf8'), 'kept\n', 'captured as its own stop() would')

    const again = await startIn(id, `console.log(JSON.stringify({ supervisor: sb.supervisorPid }))`, `, snapshotOnStop: true, checkpointsDirectory: ${JSON.stringify(checkpoints)}`)
    const destroyed = await cli('destroy', id)
    assert.equal(destroyed.status, 0, destroyed.err)
    assert.equal(await eventually(() => !alive(again.supervisor), 5000), true)
    assert.equal(fs.existsSync(socketFor(id)), false)
    assert.equal(fs.existsSync(path.join(checkpoints, id)), false, 'its checkpoint deleted')
    const gone = await cli('ps', id)
    assert.deepEqual([gone.status, gone.err], [1, `procvisor: no running sandbox with id ${id} (procvisor ls lists them)\n`])
  })

  it("destroy deletes what is left of a sandbox that is not running: its checkpoints in --checkpoints DIR, a dead supervisor's files", async () => {
    const id = freshId()
    const other = freshId()
    const checkpoints = path.join(elsewhere.dir, `${id}-checkpoints`)
    const options = `, snapshotOnStop: true, checkpointsDirectory: ${JSON.stringify(checkpoints)}`
    await startIn(id, `await sb.executeCommand('echo mine > file.txt'); console.log('{}')`, options)
    await startIn(other, `await sb.executeCommand('echo theirs > file.txt'); console.log('{}')`, options)
    for (const x of [id, other]) assert.equal((await cli('stop', x)).status, 0)
    assert.equal(fs.readFileSync(path.join(checkpoints, id, 'file.txt'), 'utf8'), 'mine\n')

    const bare = await cli('destroy', id)
    assert.equal(bare.status, 1)
    assert.match(bare.err, new RegExp(`^procvisor: no running sandbox with id ${id}, and nothing of it left here; .*procvisor destroy ${id} --checkpoints DIR\n$`))
    assert.equal(fs.existsSync(path.join(checkpoints, id)), true, 'nothing deleted without the directory')

    const destroyed = await cli('destroy', id, '--checkpoints', checkpoints)
    assert.equal(destroyed.status, 0, destroyed.err)
    assert.equal(destroyed.out, `destroyed sandbox ${id}, which was not running: deleted checkpoints ${id}\n`)
    assert.equal(fs.existsSync(path.join(checkpoints, id)), false)
    assert.equal(fs.readFileSync(path.join(checkpoints, other, 'file.txt'), 'utf8'), 'theirs\n', "another sandbox's checkpoint stays")
    const again = await cli('destroy', id, '--checkpoints', checkpoints)
    assert.deepEqual([again.status, again.out], [0, `destroyed sandbox ${id}, which was not running: no checkpoint of it in ${checkpoints}\n`])

    // A supervisor killed without its orderly end leaves its socket, lock file and log.
    const dead = freshId()
    const d = await startIn(dead, `console.log(JSON.stringify({ supervisor: sb.supervisorPid }))`)
    process.kill(d.supervisor, 'SIGKILL')
    assert.equal(await eventually(() => !alive(d.supervisor), 5000), true)
    const sock = socketFor(dead)
    const files = [sock, sock.replace(/\.sock$/, '.lock'), sock.replace(/\.sock$/, '.log')]
    assert.deepEqual(files.map((f) => fs.existsSync(f)), [true, true, true])
    const cleaned = await cli('destroy', dead)
    assert.equal(cleaned.status, 0, cleaned.err)
    assert.equal(cleaned.out, `destroyed sandbox ${dead}, which was not running: deleted what its supervisor left (${files.map((f) => path.basename(f)).join(', ')})\n`)
    assert.deepEqual(files.map((f) => fs.existsSync(f)), [false, false, false])
  })

  it('attach, under a pseudo-terminal, types into a shell, follows the window size, and detaches with Ctrl-]', async () => {
    const id = freshId()
    const s = await startIn(id, `const sh = await sb.processes.spawn('sh -i', { pty: true }); console.log(JSON.stringify({ pid: sh.pid }))`)
    const pm = new ProcessManager({ workingDirectory: ROOT })
    try {
      const t = await pm.createTerminal({ command: [process.execPath, BIN, 'attach', id, s.pid], cols: 100, rows: 30, env: { PATH: process.env.PATH, XDG_RUNTIME_DIR: process.env.XDG_RUNTIME_DIR } })
      const screen = async () => (await t.getSnapshot()).lines.join('\n')
      const shows = (re) => eventually(async () => re.test(await screen()), 10_000)
      await shows(/#|\$/)
      await t.write('echo $((6*7)); stty size\r')
      assert.equal(await shows(/^42\s*$/m), true, await screen())
      assert.equal(await shows(/^30 100\s*$/m), true, 'the window size of the attaching terminal')
      await t.resize(90, 25)
      // The resize reaches the program through attach's SIGWINCH and a call to the supervisor:
      // asked again until it has.
      const resized = await eventually(
        async () => {
          await t.write('stty size\r')
          return /^25 90\s*$/m.test(await screen())
        },
        10_000,
        300,
      )
      assert.equal(resized, true, 'and it follows a resize')
      await t.write('\x1d')
      const exit = await t.waitForExit()
      assert.equal(exit.code, 0)
      assert.equal(await shows(/\[detached from process/), true)
      assert.equal(alive(Number(s.pid)), true, 'the shell runs on')
    } finally {
      await pm.close()
    }
    // A terminal of the sandbox, by its id.
    const withTerminal = await startIn(freshId(), `const t = await sb.terminals.create({ command: 'sh -i' }); console.log(JSON.stringify({ id: sb.id, terminal: t.id }))`)
    const pm2 = new ProcessManager({ workingDirectory: ROOT })
    try {
      const t = await pm2.createTerminal({ command: [process.execPath, BIN, 'attach', withTerminal.id, withTerminal.terminal], cols: 80, rows: 24, env: { PATH: process.env.PATH, XDG_RUNTIME_DIR: process.env.XDG_RUNTIME_DIR } })
      const screen = async () => (await t.getSnapshot()).lines.join('\n')
      await eventually(async () => /#|\$/.test(await screen()), 10_000)
      await t.write('echo $((7*6))x\r')
      assert.equal(await eventually(async () => /^42x\s*$/m.test(await screen()), 10_000), true, await screen())
      await t.write('\x1d')
      assert.equal((await t.waitForExit()).code, 0)
    } finally {
      await pm2.close()
    }
    const notTty = await startIn(freshId(), `const p = await sb.processes.spawn('sleep 30'); console.log(JSON.stringify({ pid: p.pid, id: sb.id }))`)
    const refused = await cli('attach', notTty.id, notTty.pid)
    assert.deepEqual([refused.status, refused.err], [1, `procvisor: process ${notTty.pid} has no terminal (it was started without pty)\n`])
  })

  it('a stopped supervisor (SIGSTOP) is reported in one line, not waited for; ls lists the others', async () => {
    const stopped = freshId()
    const other = freshId()
    const s = await startIn(stopped, `console.log(JSON.stringify({ supervisor: sb.supervisorPid }))`)
    await startIn(other, `console.log('{}')`)
    process.kill(s.supervisor, 'SIGSTOP')
    try {
      const ps = await cli('ps', stopped)
      assert.equal(ps.status, 1)
      assert.match(ps.err, /^procvisor: sandbox .*did not greet within 3000 ms \(is it stopped\?\)\n$/)
      const ls = await cli('ls', '--json')
      assert.equal(ls.status, 0, ls.err)
      const ids = JSON.parse(ls.out).map((x) => x.id)
      assert.ok(ids.includes(other) && !ids.includes(stopped), ids.join(' '))
      assert.match(ls.err, /procvisor: skipped .*did not greet/)
    } finally {
      process.kill(s.supervisor, 'SIGCONT')
    }
    const again = await cli('ps', stopped, '--json')
    assert.equal(again.status, 0, again.err)
  })

  it('kill --help says a kill ends a service for good, and it does; ps counts restarts in words that agree', async () => {
    const help = await cli('kill', '--help')
    assert.equal(help.status, 0)
    assert.match(help.out.replace(/\s+/g, ' '), /A kill ends a service for good: a process started with a restart policy is not restarted after it/)

    const id = freshId()
    const retry = (n) => `{ restart: { policy: 'on-failure', maxRestarts: ${n}, backoffMs: { initial: 10 } } }`
    const s = await startIn(
      id,
      `const one = await sb.processes.spawn('exit 1', ${retry(1)}); await one.wait()
const two = await sb.processes.spawn('exit 2', ${retry(2)}); await two.wait()
const up = await sb.processes.spawn('sleep 60', { restart: { policy: 'always', backoffMs: { initial: 10 } } })
console.log(JSON.stringify({ one: one.pid, two: two.pid, up: up.pid }))`,
    )
    const table = await cli('ps', id)
    assert.equal(table.status, 0, table.err)
    const row = (pid) => table.out.split('\n').find((l) => l.startsWith(`${pid} `)) ?? ''
    assert.match(row(s.one), /\bexited \(1 restart\)/, table.out)
    assert.match(row(s.two), /\bexited \(2 restarts\)/, table.out)

    const killed = await cli('kill', id, s.up)
    assert.equal(killed.status, 0, killed.err)
    const state = async () => JSON.parse((await cli('ps', id, '--json')).out).processes.find((p) => p.pid === s.up)
    assert.equal(await eventually(async () => (await state()).state === 'exited', 5000), true)
    await new Promise((r) => setTimeout(r, 500))
    const after = await state()
    assert.deepEqual([after.state, after.restarts ?? 0], ['exited', 0], 'not restarted, though its policy is always')
  })

  it('unknown names exit 1 with one line; usage errors exit 2; --help answers everywhere', async () => {
    const unknown = await cli('ps', 'no-such-sandbox')
    assert.deepEqual([unknown.status, unknown.err], [1, 'procvisor: no running sandbox with id no-such-sandbox (procvisor ls lists them)\n'])
    const id = freshId()
    await startIn(id, `console.log('{}')`)
    const noPid = await cli('logs', id, '999999')
    assert.deepEqual([noPid.status, noPid.err], [1, `procvisor: sandbox ${id} has no process 999999 (procvisor ps ${id} lists them)\n`])
    for (const args of [['frob'], ['ls', 'extra'], ['ps'], ['logs', id, 'a/b'], ['kill', id, '1', '--bogus'], ['ls', '--json=1']]) {
      const r = await cli(...args)
      assert.equal(r.status, 2, `${args.join(' ')}: ${r.err}`)
      assert.match(r.err, /^procvisor: /)
    }
    const signal = await cli('kill', id, '1', '--signal', 'SIGNOPE')
    assert.equal(signal.status, 1, 'the pid is checked first')
    for (const args of [['--help'], [], ['ls', '--help'], ['logs', '-h'], ['attach', '--help']]) {
      const r = await cli(...args)
      assert.equal(r.status, 0)
      assert.match(r.out, /procvisor/)
    }
  })
})
