// sandbox.terminals on both procvisor backends: terminals that start where the sandbox's
// processes start, with what an interactive program expects in its environment, and end with the
// sandbox; a persistent sandbox's outlive the Node process that opened them.
import { it } from 'node:test'
import assert from 'node:assert/strict'
import * as os from 'node:os'
import { createRequire } from 'node:module'
import { SandboxProtocolError, SandboxSupervisorLostError } from 'procvisor/mastra'
import { InvalidProcessOptionError, InvalidProcessCursorError, StaleProcessHandleError } from 'procvisor'
import { alive, eventually } from './helpers.mjs'
import { describeBackends, perTest, startedElsewhere } from './backends.mjs'

const { Connection } = createRequire(import.meta.url)('../../lib/persistent/client/client.js')

/** Everything the terminal printed, as text. */
export async function printed(t) {
  let text = ''
  for await (const e of await t.output()) if (e.type === 'stdout') text += Buffer.from(e.data).toString()
  return text
}

const ENV_LINE = 'printf "%s|%s|%s|%s|%s|%s\\n" "$TERM" "$HOME" "$USER" "$SHELL" "$LANG" "$FROM_SANDBOX"; pwd'

describeBackends('sandbox.terminals', ['native', 'persistent'], { timeout: 30000 }, (backend) => {
  const each = perTest(backend, { prefix: 'procvisor-terminals-', defaults: () => ({ env: { PATH: process.env.PATH, FROM_SANDBOX: 'yes' } }) })

  it('a terminal runs in the working directory with TERM, HOME, USER, SHELL, LANG and the sandbox env', async () => {
    const sandbox = await each.start()
    const t = await sandbox.terminals.create({ command: ENV_LINE })
    await t.waitForExit()
    const [vars, cwd] = (await printed(t)).replace(/\r/g, '').trim().split('\n')
    const user = os.userInfo()
    assert.equal(vars, `xterm-256color|${user.homedir}|${user.username}|${user.shell}|${process.platform === 'darwin' ? 'en_US.UTF-8' : 'C.UTF-8'}|yes`)
    assert.equal(cwd, sandbox.workingDirectory)
  })

  it("the sandbox's and the call's env win over the defaults; undefined drops a name", async () => {
    const sandbox = await each.start()
    const t = await sandbox.terminals.create({ command: ENV_LINE, env: { LANG: 'fr_FR.UTF-8', HOME: undefined, SHELL: '/bin/sh' }, cwd: '.' })
    await t.waitForExit()
    const [vars] = (await printed(t)).replace(/\r/g, '').trim().split('\n')
    assert.equal(vars, `xterm-256color||${os.userInfo().username}|/bin/sh|fr_FR.UTF-8|yes`)
  })

  it("without a command the account's shell runs, on a terminal of the size asked for", async () => {
    const sandbox = await each.start()
    const t = await sandbox.terminals.create({ cols: 100, rows: 30 })
    await t.write('stty size; echo "shell-$((6 * 7))-$0"\r')
    await t.waitForLog(/shell-42-/)
    const snap = await t.getSnapshot()
    assert.equal(snap.cols, 100)
    assert.equal(snap.rows, 30)
    assert.ok(snap.lines.some((l) => l === '30 100'), snap.lines.join('\n'))
    assert.ok(snap.lines.some((l) => l.startsWith('shell-42-') && l.includes(os.userInfo().shell.split('/').pop())), snap.lines.join('\n'))
    await t.terminate()
  })

  it('get(id) finds the same terminal, list() lists it, an unknown id is null', async () => {
    const sandbox = await each.start()
    const t = await sandbox.terminals.create({ command: ['sleep', '100'] })
    assert.equal(await sandbox.terminals.get(t.id), t)
    assert.ok((await sandbox.terminals.list()).includes(t))
    assert.equal(await sandbox.terminals.get('no-such-terminal'), null)
    assert.equal(await sandbox.terminals.get(42), null)
    await t.terminate()
  })

  it('a bad option is a typed error and starts nothing', async () => {
    const sandbox = await each.start()
    const before = (await sandbox.terminals.list()).length
    await assert.rejects(sandbox.terminals.create({ command: [] }), InvalidProcessOptionError)
    await assert.rejects(sandbox.terminals.create({ command: 7 }), InvalidProcessOptionError)
    await assert.rejects(sandbox.terminals.create({ colums: 80 }), /unknown terminal option "colums"/)
    await assert.rejects(sandbox.terminals.create({ cols: 0 }), InvalidProcessOptionError)
    assert.equal((await sandbox.terminals.list()).length, before)
  })

  it('stop() kills every terminal and makes it stale; a new start has none', async () => {
    // create() starts the sandbox, as processes.spawn() does.
    const sandbox = each.make()
    const t = await sandbox.terminals.create({ command: ['sleep', '100'] })
    assert.equal(sandbox.status, 'running')
    assert.ok(alive(t.pid))
    await sandbox._stop()
    assert.ok(await eventually(() => !alive(t.pid)))
    // A persistent sandbox's stop() ends its supervisor, and its objects say so (docs/errors.md).
    await assert.rejects(t.getSnapshot(), backend.persistent ? SandboxSupervisorLostError : StaleProcessHandleError)
    await sandbox._start()
    assert.deepEqual(await sandbox.terminals.list(), [])
    assert.equal(await sandbox.terminals.get(t.id), null)
  })

  it('destroy() kills them too', async () => {
    const sandbox = await each.start()
    const t = await sandbox.terminals.create({ command: 'sleep 100' })
    await sandbox._destroy()
    assert.ok(await eventually(() => !alive(t.pid)))
  })
})

// Only a supervisor keeps a terminal running once the Node process that opened it is gone.
describeBackends('terminals that outlive their Node process', ['persistent'], { timeout: 60000 }, (backend) => {
  const each = perTest(backend, { prefix: 'procvisor-terminals-persistent-', defaults: () => ({ env: { PATH: process.env.PATH, PS1: 'p$ ' } }) })
  const elsewhere = startedElsewhere('procvisor-terminals-elsewhere-')

  it('a terminal opened by one Node process is found, read and written by the next, with its screen and cursors', async () => {
    const made = await elsewhere.startIn(
      undefined,
      `const t = await sb.terminals.create({ command: 'sh -i', cols: 60, rows: 10 })
// Typed after the first prompt, so that the screen reads the same every run.
await t.waitForLog(/p\\$ /)
await t.write('echo one-$((1 + 1))\\r')
await t.waitForLog(/one-2/)
let cursor
for await (const e of await t.output()) cursor = e.cursor
console.log(JSON.stringify({ terminal: t.id, pid: t.pid, cursor }))
await sb.detach()`,
      ", env: { PATH: process.env.PATH, PS1: 'p$ ' }",
    )
    assert.ok(alive(made.pid), 'the terminal outlives the Node process that opened it')

    const sb = await each.start({ id: made.id, workingDirectory: made.wd })
    const t = await sb.terminals.get(made.terminal)
    assert.equal(t.id, made.terminal)
    assert.equal(t.pid, made.pid)
    assert.equal(await sb.terminals.get(made.terminal), t)
    assert.deepEqual((await sb.terminals.list()).map((x) => x.id), [made.terminal])
    const before = await t.getSnapshot()
    assert.equal(before.cols, 60)
    assert.deepEqual(before.lines.slice(0, 3), ['p$ echo one-$((1 + 1))', 'one-2', 'p$'])
    await t.write('echo two-$((2 + 2))\r')
    await t.waitForLog(/two-4/)
    // The cursor the first Node process read up to resumes here: what came after it, once.
    let after = ''
    for await (const e of await t.output({ since: made.cursor })) if (e.type === 'stdout') after += Buffer.from(e.data).toString()
    assert.equal(after.replace(/\r/g, ''), 'echo two-$((2 + 2))\ntwo-4\np$ ')
    await t.resize(70, 12)
    assert.equal((await t.getSnapshot()).cols, 70)
    assert.equal(await t.interrupt(), true)
    assert.equal(await sb.terminals.get('no-such-terminal'), null)
    assert.equal((await t.status()).state, 'running')

    // stop() ends them with the sandbox; the object then says it let go of the supervisor.
    await sb.stop()
    assert.ok(await eventually(() => !alive(made.pid)))
    await assert.rejects(t.getSnapshot(), SandboxSupervisorLostError)
  })

  it('the supervisor checks every terminal call and serves on', async () => {
    const sb = await each.start()
    const t = await sb.terminals.create({ command: ['sleep', '100'] })
    const conn = await Connection.open(sb._runtime.connection().socketPath)
    try {
      await assert.rejects(conn.call('terminalCreate', { argv: 'sh' }), SandboxProtocolError)
      await assert.rejects(conn.call('terminalCreate', { argv: [] }), InvalidProcessOptionError)
      await assert.rejects(conn.call('terminalCreate', { argv: ['sh'], cols: 1e9 }), InvalidProcessOptionError)
      await assert.rejects(conn.call('terminalCreate', { argv: ['sh'], env: { A: 1 } }), SandboxProtocolError)
      for (const method of ['__proto__', 'constructor', '_core', 'close']) {
        await assert.rejects(conn.call('terminalCall', { id: t.id, method }), SandboxProtocolError)
      }
      await assert.rejects(conn.call('terminalCall', { id: t.id, method: 'write', args: [{ length: 1e12 }] }), SandboxProtocolError)
      await assert.rejects(conn.call('terminalCall', { id: t.id, method: 'resize', args: [0, 0] }), InvalidProcessOptionError)
      await assert.rejects(conn.call('terminalCall', { id: 7, method: 'status' }), SandboxProtocolError)
      await assert.rejects(conn.call('terminalLogsOpen', { id: t.id, options: { since: 'not-a-cursor' } }), InvalidProcessCursorError)
      assert.equal(await conn.call('terminalGet', { id: 'nope' }), null)
    } finally {
      conn.close()
    }
    assert.equal((await t.status()).state, 'running')
    await sb.stop()
  })
})
