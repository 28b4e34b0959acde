'use strict'
// Processes on a pseudo-terminal (the `pty` option of spawn and exec), against real programs: the
// terminal is their controlling terminal, stdin, stdout and stderr, its size is theirs, the keys
// reach them, and nothing they write before they exit is lost.
const test = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const procvisor = require('..')
const { ProcessManager } = procvisor
const { tempDir, alive, eventually } = require('./helpers')

const tmp = tempDir('procvisor-terminal-')
const pm = new ProcessManager({ workingDirectory: tmp })
test.after(() => pm.close())

const text = (bytes) => Buffer.from(bytes).toString('utf8')

/** Live pids of the session `sid` (its leader included). */
function sessionMembers(sid) {
  const out = []
  for (const d of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue
    try {
      const stat = fs.readFileSync(`/proc/${d}/stat`, 'utf8')
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
      if (Number(f[3]) === sid && alive(Number(d))) out.push(Number(d))
    } catch {}
  }
  return out
}

/** Live pids of the session `sid` whose command line starts with `argv0`. */
function sessionRunning(sid, argv0) {
  return sessionMembers(sid).filter((pid) => {
    try {
      return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0')[0] === argv0
    } catch {
      return false
    }
  })
}

test('the terminal is stdin and stdout on both faces, with TERM set and stderr empty', async () => {
  const script = '[ -t 0 ] && [ -t 1 ] && [ -t 2 ] && echo on-a-tty; echo "term=$TERM"; echo to-stderr >&2'
  const p = await pm.exec(['sh', '-c', script], { pty: true })
  assert.deepEqual(await p.waitForExit(), { code: 0, timedOut: false })
  const out = await p.output()
  assert.equal(text(out.stdout), 'on-a-tty\r\nterm=xterm-256color\r\nto-stderr\r\n')
  assert.equal(out.stderr.length, 0)

  const seen = []
  const h = await pm.spawn(script, { pty: { term: 'vt100' }, onStdout: (t) => seen.push(t) })
  const r = await h.wait()
  assert.equal(r.exitCode, 0)
  assert.equal(r.stdout, 'on-a-tty\r\nterm=vt100\r\nto-stderr\r\n')
  assert.equal(r.stderr, '')
  assert.equal(seen.join(''), r.stdout)
  const events = []
  // Followed: wait() settles once the root exited and its output was read; the terminal event is
  // logged once the whole tree is seen gone, which may be a moment later.
  for await (const e of await h.logs({ follow: true })) events.push(e.type)
  assert.deepEqual([...new Set(events)], ['stdout', 'terminal'])
})

test("the manager's or the call's TERM wins over the terminal's", async () => {
  const m = new ProcessManager({ workingDirectory: tmp, env: { TERM: 'from-manager' } })
  try {
    const p = await m.exec(['sh', '-c', 'echo $TERM'], { pty: true })
    await p.waitForExit()
    assert.equal(text((await p.output()).stdout), 'from-manager\r\n')
  } finally {
    await m.close()
  }
  const p = await pm.exec(['sh', '-c', 'echo $TERM'], { pty: true, env: { TERM: 'dumb' } })
  await p.waitForExit()
  assert.equal(text((await p.output()).stdout), 'dumb\r\n')
})

test('the child leads its own session on the terminal and its own process group', async () => {
  const p = await pm.exec(['sh', '-c', 'ps -o pid=,pgid=,sid=,tty= -p $$'], { pty: true })
  await p.waitForExit()
  const [pid, pgid, sid, tty] = text((await p.output()).stdout).trim().split(/\s+/)
  assert.equal(Number(pid), p.pid)
  assert.equal(Number(pgid), p.pid)
  assert.equal(Number(sid), p.pid)
  assert.match(tty, /^pts\//)
})

test('stty size reports the window size, and resize() changes it', async () => {
  const h = await pm.spawn('stty size; read x; stty size', { pty: true })
  await h.waitForLog(/24 80/)
  await h.resize(100, 30)
  await h.sendStdin('\n')
  const r = await h.wait()
  assert.equal(r.stdout.replace(/\r/g, ''), '24 80\n\n30 100\n')

  const p = await pm.exec(['stty', 'size'], { pty: { cols: 132, rows: 50 } })
  await p.waitForExit()
  assert.equal(text((await p.output()).stdout), '50 132\r\n')
})

test('a resize sends SIGWINCH to the foreground job', async () => {
  const p = await pm.exec(['sh', '-c', 'trap "echo winched; exit 0" WINCH; echo ready; while :; do sleep 0.05; done'], { pty: true })
  await p.waitForLog(/ready/)
  await p.resize(90, 20)
  await p.waitForLog(/winched/)
  assert.equal((await p.waitForExit()).code, 0)
})

test('an interactive python answers on the terminal', async () => {
  const h = await pm.spawn('exec python3 -i -q', { pty: true })
  await h.waitForLog(/>>> /)
  await h.sendStdin('print(6*7)\n')
  const m = await h.waitForLog(/^42\r?$/m)
  assert.equal(m.stream, 'stdout')
  assert.equal(m.match.trim(), '42')
  // The next prompt first: until readline has set the terminal up again, a ^D typed would be
  // dropped by the mode switch, as it would be for a person typing that fast.
  await h.waitForLog(/42\r\n>>> $/)
  await h.closeStdin() // ^D at the prompt ends the interpreter
  assert.equal((await h.wait()).exitCode, 0)
})

test('Ctrl-C ends the foreground sleep and the interactive shell lives on', async () => {
  const h = await pm.spawn('exec sh -i', { pty: true, env: { PS1: '$ ' } })
  await h.sendStdin('sleep 100\n')
  const sleeping = await eventually(() => sessionRunning(Number(h.pid), 'sleep').length > 0, 10_000)
  assert.ok(sleeping, 'sleep runs in the session')
  const [sleepPid] = sessionRunning(Number(h.pid), 'sleep')
  await h.sendStdin('\x03')
  assert.ok(await eventually(() => !alive(sleepPid), 10_000), 'the sleep ended')
  await h.sendStdin('echo alive-$((6*7))\n')
  await h.waitForLog(/alive-42/)
  assert.equal(h.exitCode, undefined, 'the shell still runs')
  await h.sendStdin('exit 3\n')
  assert.equal((await h.wait()).exitCode, 3)
})

test('the last 64 KiB written before exit arrives whole', async () => {
  const script = 'stty raw -echo; head -c 65536 /dev/zero | tr "\\0" x; printf E'
  for (let i = 0; i < 5; i++) {
    const p = await pm.exec(['sh', '-c', script], { pty: true })
    await p.waitForExit()
    const out = text((await p.output()).stdout)
    assert.equal(out.length, 65537)
    assert.equal(out, 'x'.repeat(65536) + 'E')
    const h = await pm.spawn(script, { pty: true })
    assert.equal((await h.wait()).stdout, 'x'.repeat(65536) + 'E')
  }
})

test('20 MB through the terminal arrives in order', async () => {
  const N = 2_700_000
  const h = await pm.spawn(`stty raw -echo; seq 1 ${N}`, { pty: true, maxRetainedBytes: 0 })
  let next = 1
  let bytes = 0
  let rest = ''
  for await (const chunk of h.reader) {
    bytes += chunk.length
    const lines = (rest + chunk.toString('latin1')).split('\n')
    rest = lines.pop()
    for (const l of lines) {
      if (Number(l) !== next) assert.fail(`line ${next} read as ${JSON.stringify(l)}`)
      next++
    }
  }
  assert.equal(rest, '')
  assert.equal(next, N + 1)
  assert.ok(bytes > 20_000_000, `${bytes} bytes`)
  assert.equal((await h.wait()).exitCode, 0)
})

test('kill leaves no member of the session alive, jobs in their own groups included', async () => {
  const h = await pm.spawn('exec sh -i', { pty: true, env: { PS1: '$ ' } })
  await h.sendStdin('sleep 300 &\nsleep 301 &\nsleep 302\n')
  const sid = Number(h.pid)
  assert.ok(await eventually(() => sessionRunning(sid, 'sleep').length === 3, 10_000), 'three jobs run')
  const groups = new Set(
    sessionRunning(sid, 'sleep').map((pid) => {
      const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8')
      return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[2])
    }),
  )
  assert.ok(![...groups].includes(sid), 'job control put the jobs in groups of their own')
  assert.equal(await h.kill(), true)
  const r = await h.wait()
  assert.equal(r.exitCode, 128)
  assert.ok(await eventually(() => sessionMembers(sid).length === 0, 10_000), `left: ${sessionMembers(sid)}`)

  const p = await pm.exec(['sh', '-c', 'sleep 303 & sleep 304 & wait'], { pty: true })
  await eventually(() => sessionRunning(p.pid, 'sleep').length === 2, 10_000)
  await p.kill(9)
  await p.waitForExit()
  assert.deepEqual(sessionMembers(p.pid), [])
})

test('stdin of a process on a terminal: raw bytes, and closeStdin is EOF', async () => {
  const h = await pm.spawn('cat; echo "cat-ended"', { pty: true })
  await h.sendStdin(Buffer.from('héllo\n'))
  await h.waitForLog(/héllo\r\nhéllo/)
  // Both before the exit that the first one causes: the second is a no-op.
  await Promise.all([h.closeStdin(), h.closeStdin()])
  const r = await h.wait()
  assert.match(r.stdout, /cat-ended/)
  await assert.rejects(h.sendStdin('x'), procvisor.ProcessAlreadyExitedError)
})

test('an exec process on a terminal can be resized but has no stdin', async () => {
  const p = await pm.exec(['sh', '-c', 'read x; stty size'], { pty: true })
  assert.equal(typeof p.sendStdin, 'undefined')
  await p.resize(40, 10)
  await p.kill(9)
  await p.waitForExit()
})

test('bad terminal options are typed errors, and nothing is started', async () => {
  const before = procvisor.liveProcessCount()
  for (const pty of [1, 'yes', { cols: 0 }, { rows: 65536 }, { cols: 1.5 }, { rows: '24' }, { term: 'a b' }, { term: '../x' }, { term: '' }, []]) {
    await assert.rejects(pm.exec(['sh', '-c', 'echo started'], { pty }), (e) => e instanceof procvisor.InvalidProcessOptionError && e.code === 'INVALID_PROCESS_OPTION', JSON.stringify(pty))
    await assert.rejects(pm.spawn('echo started', { pty }), procvisor.InvalidProcessOptionError)
  }
  assert.equal(procvisor.liveProcessCount(), before)
})

test('resize: no terminal, bad sizes, after exit', async () => {
  const plain = await pm.spawn('sleep 100')
  await assert.rejects(plain.resize(80, 24), (e) => e instanceof procvisor.ProcessNoTerminalError && e.code === 'PROCESS_NO_TERMINAL')
  assert.equal(procvisor.ProcessNoTerminalError.code, 'PROCESS_NO_TERMINAL')
  await plain.kill()
  await plain.wait()

  const h = await pm.spawn('sleep 100', { pty: true })
  for (const [c, r] of [[0, 24], [80, 0], [65536, 24], [80.5, 24], ['80', 24], [80, undefined], [undefined, undefined]]) {
    await assert.rejects(h.resize(c, r), procvisor.InvalidProcessOptionError, `${c}x${r}`)
  }
  await h.resize(65535, 1)
  await h.kill()
  await h.wait()
  await assert.rejects(h.resize(80, 24), procvisor.ProcessAlreadyExitedError)
  const p = await pm.exec(['true'], { pty: true })
  await p.waitForExit()
  await assert.rejects(p.resize(80, 24), procvisor.ProcessAlreadyExitedError)
})

test('a timeout stops a process on a terminal, with its note on the Mastra face', async () => {
  const h = await pm.spawn('sleep 100', { pty: true, timeout: 100 })
  const r = await h.wait()
  assert.equal(r.exitCode, 124)
  assert.equal(r.timedOut, true)
  assert.match(r.stderr, /timed out after 100ms/)
})

// ---- the Terminals API ---------------------------------------------------------------------

const { Terminal: XTerm } = require('@xterm/headless')

/** All the terminal's output so far, as bytes. */
async function outputBytes(t) {
  const parts = []
  for await (const e of await t.output()) if (e.type === 'stdout') parts.push(Buffer.from(e.data))
  return Buffer.concat(parts)
}

/** What xterm.js shows for `bytes` on a `cols` × `rows` screen. */
function xtermRender(bytes, cols, rows) {
  const term = new XTerm({ cols, rows, allowProposedApi: true })
  let title = ''
  term.onTitleChange((t) => (title = t))
  return new Promise((resolve) =>
    term.write(bytes, () => {
      const buf = term.buffer.active
      const lines = []
      for (let i = 0; i < rows; i++) lines.push(buf.getLine(buf.viewportY + i).translateToString(true))
      resolve({ lines, cursor: { row: buf.cursorY, col: buf.cursorX }, title })
      term.dispose()
    }),
  )
}

test('a full-screen program: getSnapshot() agrees with xterm.js line for line', async () => {
  const draw = [
    '\\033]2;the title\\007',
    '\\033[2Jnoise that is cleared\\033[2J\\033[H',
    '\\033[1;1H+------+',
    '\\033[2;1H| menu |',
    '\\033[3;1H+------+',
    '\\033[6;20Hcentre',
    '\\033[12;55Hend',
    '\\033[6;1Hover',
    '\\033[8;3HDONE',
  ].join('')
  const t = await pm.createTerminal({ command: ['sh', '-c', `printf '${draw}'; read x`], cols: 60, rows: 12 })
  assert.ok(t instanceof procvisor.Terminal)
  await t.waitForLog('DONE')
  const snap = await t.getSnapshot()
  assert.equal(snap.cols, 60)
  assert.equal(snap.rows, 12)
  assert.equal(snap.title, 'the title')
  assert.deepEqual(snap.lines.slice(0, 8), ['+------+', '| menu |', '+------+', '', '', 'over               centre', '', '  DONE'])
  assert.equal(snap.lines[11], ' '.repeat(54) + 'end')
  assert.deepEqual(snap.cursor, { row: 7, col: 6 })
  const xterm = await xtermRender(await outputBytes(t), 60, 12)
  assert.deepEqual(snap.lines, xterm.lines)
  assert.deepEqual(snap.cursor, xterm.cursor)
  assert.equal(snap.title, xterm.title)

  await t.resize(30, 6)
  const small = await t.getSnapshot()
  assert.equal(small.cols, 30)
  assert.equal(small.rows, 6)
  assert.equal(small.lines.length, 6)
  const exit = await t.terminate()
  assert.equal(exit.signal, 9)
})

test('a terminal program that redraws on resize is rendered at its new size', async () => {
  const script = 'draw() { printf "\\033[2J\\033[H%s" "$(stty size)"; }; trap draw WINCH; draw; while :; do sleep 0.05; done'
  const t = await pm.createTerminal({ command: ['sh', '-c', script], cols: 40, rows: 10 })
  await t.waitForLog('10 40')
  await t.resize(70, 20)
  await t.waitForLog('20 70')
  const snap = await t.getSnapshot()
  assert.equal(snap.lines[0], '20 70')
  assert.deepEqual(snap.lines, (await xtermRender(await outputBytes(t), 70, 20)).lines)
  await t.terminate()
})

test('output({ since }) resumes after a cursor with no gap and no repeat', async () => {
  const t = await pm.createTerminal({ command: ['sh', '-c', 'seq 1 3000; read x; seq 3001 6000'] })
  const first = []
  const reader = (await t.output({ follow: true })).getReader()
  let cursor
  for (let text = ''; !text.includes('3000\r\n'); ) {
    const { value } = await reader.read()
    first.push(value)
    cursor = value.cursor
    text += Buffer.from(value.data).toString()
  }
  await reader.cancel()
  await t.write('\r')
  const rest = []
  for await (const e of await t.output({ since: cursor, follow: true })) rest.push(e)
  assert.equal(rest.at(-1).type, 'terminal')
  const text = Buffer.concat([...first, ...rest.slice(0, -1)].map((e) => Buffer.from(e.data))).toString()
  const lines = text.split('\r\n').filter((l) => l !== '')
  assert.deepEqual(lines, Array.from({ length: 6000 }, (_, i) => String(i + 1)))
  const all = []
  for await (const e of await t.output()) all.push(e.cursor)
  assert.deepEqual([...first, ...rest].map((e) => e.cursor), all, 'the same events, in order')
})

test('interrupt() stops the foreground sleep and the shell lives on', async () => {
  const t = await pm.createTerminal({ env: { PS1: '$ ' } })
  await t.write('sleep 100\n')
  assert.ok(await eventually(() => sessionRunning(t.pid, 'sleep').length > 0, 10_000), 'sleep runs')
  const [sleepPid] = sessionRunning(t.pid, 'sleep')
  assert.equal(await t.interrupt(), true)
  assert.ok(await eventually(() => !alive(sleepPid), 10_000), 'the sleep ended')
  await t.write('echo alive-$((6*7))\n')
  await t.waitForLog(/alive-42/)
  await t.write('exit 5\n')
  assert.equal((await t.waitForExit()).code, 5)
  await assert.rejects(t.interrupt(), procvisor.ProcessAlreadyExitedError)
  await assert.rejects(t.write('x'), procvisor.ProcessAlreadyExitedError)
  await assert.rejects(t.resize(80, 24), procvisor.ProcessAlreadyExitedError)
  assert.match((await t.getSnapshot()).lines.join('\n'), /alive-42/, 'the screen outlives the program')
})

test('terminals are found by id, listed, and are processes too', async () => {
  const t = await pm.createTerminal({ command: ['sh', '-c', 'sleep 301 & sleep 302'] })
  assert.equal(await pm.getTerminal(t.id), t)
  assert.equal(await pm.getTerminal('nope'), null)
  assert.ok((await pm.listTerminals()).some((s) => s.id === t.id && s.state === 'running'))
  assert.ok((await pm.getProcess(t.id)) instanceof procvisor.Process)
  const plain = await pm.exec(['true'])
  assert.equal(await pm.getTerminal(plain.id), null)
  assert.ok(!(await pm.listTerminals()).some((s) => s.id === plain.id))
  await eventually(() => sessionRunning(t.pid, 'sleep').length === 2, 10_000)
  const exit = await t.terminate()
  assert.equal(exit.signal, 9)
  assert.deepEqual(sessionMembers(t.pid), [])
  assert.equal((await t.status()).state, 'exited')
})

test('createTerminal: bad input is typed, nothing is started', async () => {
  const before = procvisor.liveProcessCount()
  for (const [o, C] of [
    [5, procvisor.InvalidProcessOptionError],
    [{ cols: 0 }, procvisor.InvalidProcessOptionError],
    [{ rows: 2 ** 16 }, procvisor.InvalidProcessOptionError],
    [{ term: 'x y' }, procvisor.InvalidProcessOptionError],
    [{ command: 'sh' }, procvisor.InvalidProcessCommandError],
    [{ command: [] }, procvisor.InvalidProcessCommandError],
    [{ cwd: '/definitely/not/here' }, procvisor.InvalidProcessCwdError],
    [{ env: { A: 1 } }, procvisor.InvalidProcessEnvironmentError],
  ]) {
    await assert.rejects(pm.createTerminal(o), C, JSON.stringify(o))
  }
  assert.equal(procvisor.liveProcessCount(), before)
  assert.throws(() => new procvisor.Terminal({}), procvisor.InvalidProcessOptionError)
})
