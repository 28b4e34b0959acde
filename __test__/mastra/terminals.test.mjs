// sandbox.terminals on NativeLocalSandbox: terminals that start where the sandbox's processes
// start, with what an interactive program expects in its environment, and end with the sandbox.
import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import * as fs from 'node:fs'
import * as os from 'node:os'
import { NativeLocalSandbox } from 'procvisor/mastra'
import { InvalidProcessOptionError, StaleProcessHandleError } from 'procvisor'
import { alive, eventually, tempDir } from './helpers.mjs'

/** Everything the terminal printed, as text. */
export async function printed(t) {
  let text = ''
  for await (const e of await t.output()) if (e.type === 'stdout') text += Buffer.from(e.data).toString()
  return text
}

const ENV_LINE = 'printf "%s|%s|%s|%s|%s|%s\\n" "$TERM" "$HOME" "$USER" "$SHELL" "$LANG" "$FROM_SANDBOX"; pwd'

describe('sandbox.terminals in a local sandbox', { timeout: 30000 }, () => {
  let dir
  let sandbox
  before(async () => {
    dir = tempDir('procvisor-terminals-')
    sandbox = new NativeLocalSandbox({ workingDirectory: dir, env: { PATH: process.env.PATH, FROM_SANDBOX: 'yes' } })
    await sandbox._start()
  })
  after(async () => {
    await sandbox._destroy().catch(() => {})
    fs.rmSync(dir, { recursive: true, force: true })
  })

  it('a terminal runs in the working directory with TERM, HOME, USER, SHELL, LANG and the sandbox env', async () => {
    const t = await sandbox.terminals.create({ command: ENV_LINE })
    await t.waitForExit()
    const [vars, cwd] = (await printed(t)).replace(/\r/g, '').trim().split('\n')
    const user = os.userInfo()
    assert.equal(vars, `xterm-256color|${user.homedir}|${user.username}|${user.shell}|${process.platform === 'darwin' ? 'en_US.UTF-8' : 'C.UTF-8'}|yes`)
    assert.equal(cwd, dir)
  })

  it("the sandbox's and the call's env win over the defaults; undefined drops a name", async () => {
    const t = await sandbox.terminals.create({ command: ENV_LINE, env: { LANG: 'fr_FR.UTF-8', HOME: undefined, SHELL: '/bin/sh' }, cwd: '.' })
    await t.waitForExit()
    const [vars] = (await printed(t)).replace(/\r/g, '').trim().split('\n')
    assert.equal(vars, `xterm-256color||${os.userInfo().username}|/bin/sh|fr_FR.UTF-8|yes`)
  })

  it("without a command the account's shell runs, on a terminal of the size asked for", async () => {
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
    const t = await sandbox.terminals.create({ command: ['sleep', '100'] })
    assert.equal(await sandbox.terminals.get(t.id), t)
    assert.ok((await sandbox.terminals.list()).includes(t))
    assert.equal(await sandbox.terminals.get('no-such-terminal'), null)
    assert.equal(await sandbox.terminals.get(42), null)
    await t.terminate()
  })

  it('a bad option is a typed error and starts nothing', async () => {
    const before = (await sandbox.terminals.list()).length
    await assert.rejects(sandbox.terminals.create({ command: [] }), InvalidProcessOptionError)
    await assert.rejects(sandbox.terminals.create({ command: 7 }), InvalidProcessOptionError)
    await assert.rejects(sandbox.terminals.create({ colums: 80 }), /unknown terminal option "colums"/)
    await assert.rejects(sandbox.terminals.create({ cols: 0 }), InvalidProcessOptionError)
    assert.equal((await sandbox.terminals.list()).length, before)
  })
})

describe('terminals end with the sandbox', { timeout: 30000 }, () => {
  it('stop() kills every terminal and makes it stale; a new start has none', async () => {
    const dir = tempDir('procvisor-terminals-stop-')
    const sandbox = new NativeLocalSandbox({ workingDirectory: dir, env: { PATH: process.env.PATH } })
    try {
      // create() starts the sandbox, as processes.spawn() does.
      const t = await sandbox.terminals.create({ command: ['sleep', '100'] })
      assert.equal(sandbox.status, 'running')
      assert.ok(alive(t.pid))
      await sandbox._stop()
      assert.ok(await eventually(() => !alive(t.pid)))
      await assert.rejects(t.getSnapshot(), StaleProcessHandleError)
      await sandbox._start()
      assert.deepEqual(await sandbox.terminals.list(), [])
      assert.equal(await sandbox.terminals.get(t.id), null)
    } finally {
      await sandbox._destroy().catch(() => {})
      fs.rmSync(dir, { recursive: true, force: true })
    }
  })

  it('destroy() kills them too', async () => {
    const dir = tempDir('procvisor-terminals-destroy-')
    const sandbox = new NativeLocalSandbox({ workingDirectory: dir, env: { PATH: process.env.PATH } })
    try {
      await sandbox._start()
      const t = await sandbox.terminals.create({ command: 'sleep 100' })
      await sandbox._destroy()
      assert.ok(await eventually(() => !alive(t.pid)))
    } finally {
      fs.rmSync(dir, { recursive: true, force: true })
    }
  })
})
