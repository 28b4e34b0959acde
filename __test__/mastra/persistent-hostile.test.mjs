// Persistent sandboxes against clients that misbehave: frames that are not what the protocol
// says, clients that stop reading, data larger than a frame, waits given an aborted signal. The
// supervisor must serve every other client on, its processes untouched.
import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import * as fs from 'node:fs'
import * as path from 'node:path'
import { execFile } from 'node:child_process'
import { createHash, randomBytes } from 'node:crypto'
import { createRequire } from 'node:module'
import { NativeLocalSandbox, SandboxProtocolError } from 'procvisor/mastra'
import { ROOT, alive } from './helpers.mjs'
import { raw, sandboxesPerTest } from './persistent-common.mjs'

const require = createRequire(import.meta.url)
const protocol = require('../../lib/persistent/wire/protocol.js')

const sandboxes = sandboxesPerTest('hostile')
const freshId = () => `hostile-${randomBytes(6).toString('hex')}`
/** A started persistent sandbox, and the socket its client found the supervisor on. */
const started = () => sandboxes.start()

/** A frame with this body, however malformed. */
const frame = (text) => {
  const body = Buffer.from(text)
  const head = Buffer.alloc(4)
  head.writeUInt32BE(body.length, 0)
  return Buffer.concat([head, body])
}

/** A BLOB frame: `json`, then `payload`, its JSON's length said to be `claimed`. */
const blob = (json, payload, claimed) => {
  const text = Buffer.from(json)
  const head = Buffer.alloc(5)
  head[0] = protocol.KIND.BLOB
  head.writeUInt32BE(claimed === undefined ? text.length : claimed, 1)
  return frame(Buffer.concat([head, text, payload]))
}

describe('persistent sandboxes against misbehaving clients', () => {
  it('a malformed frame gets an error reply or a disconnect; the supervisor, its processes and other clients go on', async () => {
    const { sb, socketPath } = await started()
    const supervisor = sb.supervisorPid
    const sleeper = await sb.processes.spawn('sleep 300')
    const pid = sleeper.pid
    const huge = Buffer.alloc(4)
    huge.writeUInt32BE(0xffffffff, 0)
    const cases = [
      ['not JSON', frame('{x')],
      ['null', frame('null')],
      ['a number', frame('42')],
      ['a string', frame('"call"')],
      ['an array', frame('[1,2]')],
      ['a huge length', huge],
      ['no fields', { t: 'call' }],
      ['an unknown type', { t: 'reply', id: 1, value: 1 }],
      ['a second hello', protocol.hello()],
      ['an id that is an object', { t: 'call', id: { x: 1 }, op: 'list' }],
      ['op __proto__', { t: 'call', id: 1, op: '__proto__' }],
      ['op constructor', { t: 'call', id: 2, op: 'constructor' }],
      ['op toString', { t: 'call', id: 3, op: 'toString' }],
      ['op hasOwnProperty', { t: 'call', id: 4, op: 'hasOwnProperty', args: {} }],
      ['op a number', { t: 'call', id: 5, op: 7 }],
      ['args a number', { t: 'call', id: 6, op: 'attach', args: 5 }],
      ['args null', { t: 'call', id: 7, op: 'attach', args: null }],
      ['pid an object', { t: 'call', id: 8, op: 'attach', args: { pid: { toString: 1 } } }],
      ['view args not a list', { t: 'call', id: 9, op: 'view', args: { pid, method: 'status', args: 7 } }],
      ['view method constructor', { t: 'call', id: 10, op: 'view', args: { pid, method: 'constructor' } }],
      ['view method not a string', { t: 'call', id: 11, op: 'view', args: { pid, method: ['status'] } }],
      ['stdin data a number', { t: 'call', id: 12, op: 'stdin', args: { pid, data: 5 } }],
      ['spawn command a number', { t: 'call', id: 13, op: 'spawn', args: { command: 5 } }],
      ['spawn fields of the wrong types', { t: 'call', id: 14, op: 'spawn', args: { command: 'true', argv: 'x', env: 5, cwd: 7, timeout: 'x', pty: 'x' } }],
      ['spawn env values not strings', { t: 'call', id: 15, op: 'spawn', args: { command: 'true', env: { A: {} } } }],
      ['spawn values the launch refuses', { t: 'call', id: 20, op: 'spawn', args: { command: 'true', pty: 'x', timeout: -1, stdinMode: 'bogus' } }],
      ['spawn a pty of no size', { t: 'call', id: 21, op: 'spawn', args: { command: 'true', pty: { cols: -5, rows: 1e12 } } }],
      ['spawn a cwd that is not there', { t: 'call', id: 22, op: 'spawn', args: { command: 'true', cwd: '/nonexistent/x' } }],
      ['logsRead stream __proto__', { t: 'call', id: 16, op: 'logsRead', args: { stream: '__proto__' } }],
      ['logsOpen options a bad pattern', { t: 'call', id: 17, op: 'logsOpen', args: { pid, options: { $re: [5, 'zz'] } } }],
      ['kill a bad signal', { t: 'call', id: 18, op: 'kill', args: { pid, signal: { $buf: 1 } } }],
      ['an output frame from a client', Buffer.concat([protocol.outHead(Number(pid), 0, 3), Buffer.from('abc')])],
      ['a part frame from a client', Buffer.concat(protocol.part(30, Buffer.from('{}')))],
      ['a frame of an unknown kind', frame(Buffer.from([0x09, 1, 2, 3]))],
      ['a frame of no bytes', frame('')],
      ['a credit frame of the wrong size', frame(Buffer.from([protocol.KIND.CREDIT, 0, 0, 1]))],
      ['bytes referred to past the frame', blob(`{"t":"call","id":31,"op":"stdin","args":{"pid":"${pid}","data":{"$bin":[0,99]}}}`, Buffer.from('abc'))],
      ['a BLOB whose JSON is longer than the frame', blob('{"t":"call"}', Buffer.alloc(0), 0x7fffffff)],
      ['stdin data that is JSON, not bytes', { t: 'call', id: 32, op: 'stdin', args: { pid, data: { $bin: [0, 1] } } }],
      ['a call id past 32 bits', { t: 'call', id: 2 ** 32, op: 'list' }],
      ['a deep value', frame(`{"t":"call","id":19,"op":"view","args":{"pid":"${pid}","method":"status","args":[${'['.repeat(100000)}${']'.repeat(100000)}]}}`)],
    ]
    for (const [what, bad] of cases) {
      const c = await raw(socketPath).hello()
      c.send(bad)
      const answer = await c.next()
      // Either an error reply to that call, or a refusal that says why, then the disconnect.
      assert.notEqual(answer, 'closed', `${what}: told why`)
      const error = answer.t === 'reply' ? answer.error : answer
      assert.ok(answer.t === 'refused' || answer.t === 'reply', `${what}: got ${JSON.stringify(answer).slice(0, 200)}`)
      assert.equal(typeof error?.code, 'string', `${what}: a typed error, got ${JSON.stringify(answer).slice(0, 200)}`)
      if (answer.t === 'refused') assert.equal(await c.next(), 'closed', `${what}: then disconnected`)
      c.socket.destroy()
      assert.equal(alive(supervisor), true, `the supervisor lives on after ${what}`)
      assert.equal(alive(Number(pid)), true, `its process lives on after ${what}`)
    }
    // Credit for a stream that is not open (closed since, say): no answer, nothing broken.
    const c = await raw(socketPath).hello()
    c.send(protocol.credit(77, 100))
    c.send({ t: 'call', id: 40, op: 'list' })
    const listed = await c.next()
    assert.equal(listed.id, 40)
    assert.deepEqual(listed.value.map((p) => p.pid), [pid])
    // Credit past the window, for the output or a log stream: a client that does not count what
    // it reads is told so, then disconnected.
    c.send({ t: 'call', id: 41, op: 'logsOpen', args: { pid, options: { follow: true } } })
    const opened = await c.next()
    assert.equal(opened.id, 41)
    for (const [stream, n] of [[0, 0xffffffff], [0, 1], [opened.value, 1]]) {
      const d = stream === opened.value ? c : await raw(socketPath).hello()
      d.send(protocol.credit(stream, n))
      const refused = await d.next()
      assert.equal(refused.t, 'refused', `credit of ${n} for stream ${stream}: ${JSON.stringify(refused).slice(0, 200)}`)
      assert.equal(refused.code, 'SANDBOX_PROTOCOL_MISMATCH')
      assert.match(refused.message, /credit of \d+ bytes for stream \d+/)
      assert.equal(await d.next(), 'closed')
      assert.equal(alive(supervisor), true)
    }
    // The first client was never disturbed.
    const echo = await sb.processes.spawn('echo still here')
    assert.equal((await echo.wait()).stdout, 'still here\n')
    assert.deepEqual((await sb.processes.list()).map((p) => p.pid).sort(), [pid, echo.pid].sort())
    await sb._stop()
  })

  it('a spawn frame with a bad maxRetainedBytes is refused by the rule a local spawn applies, and launches nothing', async () => {
    const { sb, socketPath } = await started()
    const local = await sb.processes.spawn('true', { maxRetainedBytes: -5 }).catch((e) => e)
    assert.ok(local instanceof RangeError)
    const c = await raw(socketPath).hello()
    let id = 50
    for (const bad of [-5, 1.5]) {
      c.send({ t: 'call', id: ++id, op: 'spawn', args: { command: 'touch made', name: 'kept', maxRetainedBytes: bad } })
      const answer = await c.next()
      assert.equal(answer.id, id)
      assert.equal(answer.error?.code, 'INVALID_PROCESS_OPTION', JSON.stringify(answer))
      assert.equal(answer.error.name, 'InvalidProcessOptionError')
      assert.equal(answer.error.message, local.message)
    }
    c.send({ t: 'call', id: ++id, op: 'list' })
    assert.deepEqual((await c.next()).value, [])
    assert.equal(fs.existsSync(path.join(sb.workingDirectory, 'made')), false)
    // The refusal left the name it asked for free.
    const named = await sb.processes.spawn('true', { name: 'kept' })
    assert.equal((await named.wait()).exitCode, 0)
    c.socket.destroy()
    await sb._stop()
  })

  it('a remote wait given an aborted signal rejects at once and leaves no rejection behind to end Node', async () => {
    // In a Node process of its own: an unhandled rejection there exits it with code 1.
    const id = freshId()
    const wd = path.join(sandboxes.dir, 'wd')
    const code = `
      import { NativeLocalSandbox } from ${JSON.stringify(path.join(ROOT, 'mastra/index.mjs'))}
      const sb = new NativeLocalSandbox({ id: ${JSON.stringify(id)}, workingDirectory: ${JSON.stringify(wd)}, persistent: true, timeoutMs: 60000 })
      await sb.start()
      try {
        const p = await sb.processes.spawn('sleep 30')
        const signal = AbortSignal.abort()
        const h = p.nativeHandle
        const results = {}
        for (const [name, call] of Object.entries({
          waitForPort: () => h.waitForPort(1, { signal, timeout: 300 }),
          waitForLog: () => h.waitForLog('never', { signal, timeout: 300 }),
          waitForExit: () => h.waitForExit({ signal, timeout: 300 }),
          output: () => h.output({ signal, timeout: 300 }),
        })) {
          try {
            await call()
            results[name] = 'resolved'
          } catch (e) {
            results[name] = e.code
          }
        }
        // Long enough for any wait the supervisor was asked for to time out.
        await new Promise((r) => setTimeout(r, 1500))
        console.log(JSON.stringify(results))
      } finally {
        await sb.stop()
      }`
    const { exitCode, stdout, stderr } = await new Promise((resolve) => {
      const p = execFile(process.execPath, ['--input-type=module', '-e', code], { cwd: ROOT, timeout: 30_000 }, (error, stdout, stderr) =>
        resolve({ exitCode: p.exitCode, stdout, stderr }),
      )
    })
    assert.equal(exitCode, 0, stderr)
    assert.deepEqual(JSON.parse(stdout), { waitForPort: 'PROCESS_ABORTED', waitForLog: 'PROCESS_ABORTED', waitForExit: 'PROCESS_ABORTED', output: 'PROCESS_ABORTED' })
  })

  it('a client that stops reading while a process floods: bounded supervisor memory, the others served, the output caught up later', async () => {
    const { sb, socketPath } = await started()
    const supervisor = sb.supervisorPid
    const rss = () => Number(/VmRSS:\s+(\d+)/.exec(fs.readFileSync(`/proc/${supervisor}/status`, 'utf8'))[1]) / 1024
    const start = rss()
    const c = await raw(socketPath).hello()
    // 169 MB of output to a client that reads nothing more after the spawn's reply: what it is
    // owed never goes past one window.
    const lines = 20_000_000
    c.send({ t: 'call', id: 1, op: 'spawn', args: { command: `seq 1 ${lines}`, env: { PATH: process.env.PATH } } })
    const reply = await c.next()
    c.socket.pause()
    const pid = reply.value.pid
    let peak = start
    for (;;) {
      peak = Math.max(peak, rss())
      const p = (await sb.processes.list()).find((x) => x.pid === pid)
      if (!p.running) break
      await new Promise((r) => setTimeout(r, 50))
    }
    peak = Math.max(peak, rss())
    assert.ok(peak - start < 120, `the supervisor grew from ${start.toFixed(0)} to ${peak.toFixed(0)} MiB`)
    const echo = await sb.processes.spawn('echo served')
    assert.equal((await echo.wait()).stdout, 'served\n')
    // Reading again, the client gets output up to the end (the part it fell behind by is what the
    // supervisor still retains) and then the exit.
    c.socket.resume()
    let text = ''
    for (;;) {
      const m = await c.next()
      assert.notEqual(m, 'closed')
      if (m.t === 'out' && String(m.pid) === pid) text += m.data.toString()
      if (m.t !== 'event' || m.pid !== pid) continue
      if (m.kind === 'exit') {
        assert.equal(m.result.exitCode, 0)
        break
      }
    }
    assert.ok(text.startsWith('1\n2\n3\n'), text.slice(0, 20))
    assert.ok(text.endsWith(`\n${lines - 1}\n${lines}\n`), text.slice(-30))
    c.socket.destroy()
    await sb._stop()
  })

  it('connections that end at any point (before the hello, mid-frame, after a call) leave the supervisor no descriptor', async () => {
    const { sb, socketPath } = await started()
    const supervisor = sb.supervisorPid
    const fds = () => fs.readdirSync(`/proc/${supervisor}/fd`).length
    const settle = async () => {
      // A closed connection is closed on the supervisor's side at its next turn.
      for (let i = 0; i < 50 && fds() !== before; i++) await new Promise((r) => setTimeout(r, 20))
    }
    // Counted once the supervisor served a client: its lazily opened descriptors are open by then.
    assert.equal((await (await sb.processes.spawn('echo warm')).wait()).stdout, 'warm\n')
    const before = fds()
    const half = Buffer.concat([protocol.lengthOf(1024 * 1024), Buffer.from([protocol.KIND.BLOB]), Buffer.alloc(1000)])
    for (let i = 0; i < 20; i++) {
      const c = raw(socketPath)
      if (i % 4 === 0) {
        await new Promise((r) => c.socket.once('connect', r))
      } else {
        await c.hello()
        if (i % 4 === 1) c.send(half)
        if (i % 4 === 2) {
          c.send({ t: 'call', id: 1, op: 'list' })
          assert.equal((await c.next()).t, 'reply')
        }
      }
      if (i % 2 === 0) c.socket.destroy()
      else c.socket.end()
    }
    await settle()
    assert.equal(fds(), before, 'every connection closed on both descriptors the supervisor had of it')
    assert.equal((await (await sb.processes.spawn('echo served')).wait()).stdout, 'served\n')
  })

  it('50 MiB of stdin and a 70 MiB reply cross the socket whole, and the connection stays up', async () => {
    const { sb } = await started()
    const wd = path.join(sandboxes.dir, 'wd')
    const sha = (b) => createHash('sha256').update(b).digest('hex')
    // Over the 64 MiB of one frame once in base64: sent in pieces, in order.
    const data = randomBytes(50 * 1024 * 1024)
    const cat = await sb.processes.spawn('cat > big.bin')
    await cat.sendStdin(data)
    await cat.closeStdin()
    assert.equal((await cat.wait()).exitCode, 0)
    const written = fs.readFileSync(path.join(wd, 'big.bin'))
    assert.equal(written.length, data.length)
    assert.equal(sha(written), sha(data))
    fs.rmSync(path.join(wd, 'big.bin'))
    // Writes not waited for, each of several pieces, still arrive in call order, then the EOF.
    const a = Buffer.alloc(3 * 1024 * 1024, 'a')
    const b = Buffer.alloc(3 * 1024 * 1024 + 5, 'b')
    const ordered = await sb.processes.spawn('cat > order.bin')
    await Promise.all([ordered.sendStdin(a), ordered.sendStdin(b), ordered.closeStdin()])
    assert.equal((await ordered.wait()).exitCode, 0)
    assert.equal(sha(fs.readFileSync(path.join(wd, 'order.bin'))), sha(Buffer.concat([a, b])))
    // A call that no frame can carry fails alone, before anything is sent.
    await assert.rejects(sb.processes.spawn(`#${'x'.repeat(65 * 1024 * 1024)}`), SandboxProtocolError)

    // 70 MiB of retained output, handed to a second Node-side object that attaches to it.
    const size = 70 * 1024 * 1024
    const big = await sb.processes.spawn(`head -c ${size} /dev/zero | tr '\\0' a`, { maxRetainedBytes: Infinity })
    await big.wait()
    assert.equal(big.stdout.length, size)
    const other = new NativeLocalSandbox({ id: sb.id, workingDirectory: wd, persistent: true })
    assert.equal((await other.start()).outcome, 'connected')
    try {
      const again = await other.processes.get(big.pid)
      assert.equal(again.stdout.length, size)
      assert.equal(again.stdout, big.stdout)
      // The same connection goes on; the read after the exit pruned `big`, for every object.
      assert.deepEqual((await other.processes.list()).map((p) => p.pid).sort(), [cat.pid, ordered.pid].sort())
      const echo = await other.processes.spawn('echo next')
      assert.equal((await echo.wait()).stdout, 'next\n')
    } finally {
      await other.detach()
    }
    await sb._stop()
  })
})
