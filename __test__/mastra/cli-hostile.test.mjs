// The `procvisor` command line against supervisors that misbehave: one that greets as a real
// one does and then answers nothing. Every command reports it within its deadline, in one line,
// with a non-zero exit, rather than waiting until killed; a follow stream is not cut by it.
import { describe, it, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import * as fs from 'node:fs'
import * as net from 'node:net'
import * as path from 'node:path'
import { createRequire } from 'node:module'
import { ROOT, tempDir } from './helpers.mjs'
import { freshId, socketFor } from './persistent-common.mjs'
import { privateSockets, startedElsewhere } from './backends.mjs'

const require = createRequire(import.meta.url)
const protocol = require('../../lib/persistent/wire/protocol.js')
const { FrameReader } = require('../../lib/persistent/wire/reader.js')

privateSockets()
const aside = startedElsewhere('procvisor-cli-hostile-aside-')
const BIN = path.join(ROOT, 'bin/procvisor.js')
const cleanups = []
let tmp

/** Runs `procvisor ...args` (killed after `killAfter` ms); resolves with its status, output and how long it took. */
function cli(args, { env = {}, killAfter = 20_000 } = {}) {
  const started = Date.now()
  return new Promise((resolve) => {
    execFile(process.execPath, [BIN, ...args], { env: { ...process.env, ...env }, timeout: killAfter }, (error, stdout, stderr) => {
      resolve({ status: error ? error.code ?? error.signal : 0, out: stdout, err: stderr, ms: Date.now() - started })
    })
  })
}

/**
 * A supervisor for sandbox `id` that answers the hello as a real one does (the same frame, the
 * same fields of the sandbox) and then reads every call and answers none, or, with `failing`,
 * answers each with that error (a broken supervisor). Resolves with the calls it was asked, as
 * they come.
 */
async function silentSupervisor(id, { failing } = {}) {
  const calls = []
  const server = net.createServer((socket) => {
    const frames = new FrameReader()
    let greeted = false
    socket.on('error', () => {})
    socket.on('data', (d) => {
      for (const m of frames.push(d)) {
        if (!greeted) {
          greeted = true
          const now = Date.now()
          const sandbox = { id, workingDirectory: tmp, startedAt: now, expiresAt: now + 3_600_000, pid: process.pid, checkpointsDirectory: null, snapshot: null }
          socket.write(protocol.encode(protocol.hello({ sandbox })))
        } else if (m.op) {
          calls.push(m.op)
          if (failing) socket.write(protocol.encode({ t: 'reply', id: m.id, error: protocol.fromError(failing) }))
        }
      }
    })
  })
  const sock = socketFor(id)
  await new Promise((resolve) => server.listen(sock, resolve))
  let closing
  /** Gone before the next test: a supervisor another test would list too. */
  calls.close = () =>
    (closing ??= new Promise((r) => server.close(r)).then(() => fs.rmSync(sock, { force: true })))
  cleanups.push(calls.close)
  return calls
}

before(() => {
  tmp = tempDir('procvisor-cli-hostile-')
})
after(async () => {
  for (const c of cleanups.reverse()) await c()
  fs.rmSync(tmp, { recursive: true, force: true })
})

describe('procvisor ls beside a broken supervisor', () => {
  it('lists the sandboxes that answer, and names the one that answered an error, exit status 1', async (t) => {
    const broken = freshId()
    const fake = await silentSupervisor(broken, { failing: new TypeError('something is not a function') })
    t.after(fake.close)
    const { id } = await aside.startIn()
    const r = await cli(['ls', '--json', '--timeout', '5000'])
    assert.equal(r.status, 1, r.err)
    assert.match(r.err, new RegExp(`^procvisor: skipped sandbox ${broken}: .*something is not a function\\n$`, 'm'))
    const listed = JSON.parse(r.out).map((s) => s.id)
    assert.ok(listed.includes(id), r.out)
    assert.ok(!listed.includes(broken), r.out)
  })
})

describe('procvisor against a supervisor that greets and then answers nothing', () => {
  it('every command fails within its deadline, in one line, exit status 1', async () => {
    const id = freshId()
    const calls = await silentSupervisor(id)
    const commands = [['ps', id], ['ls'], ['logs', id, '4242'], ['logs', id, '4242', '--follow'], ['kill', id, '4242'], ['attach', id, 'terminal-1'], ['stop', id], ['destroy', id]]
    for (const args of commands) {
      const r = await cli([...args, '--timeout', '700'], { killAfter: 8000 })
      const what = `procvisor ${args.join(' ')}`
      assert.equal(r.status, 1, `${what}: ${r.err}`)
      assert.match(r.err, new RegExp(`^procvisor: (skipped )?sandbox ${id}: its supervisor \\(pid ${process.pid}\\) did not answer within 700 ms \\(is it stuck\\? --timeout MS waits longer\\)\\n$`), what)
      assert.ok(r.ms < 5000, `${what} took ${r.ms} ms`)
    }
    assert.ok(calls.includes('list') && calls.includes('shutdown') && calls.includes('terminalGet'), calls.join(' '))

    const env = await cli(['ps', id], { env: { PROCVISOR_TIMEOUT_MS: '600' }, killAfter: 8000 })
    assert.equal(env.status, 1)
    assert.match(env.err, /did not answer within 600 ms/)
    // The default, unset: ten seconds.
    const plain = await cli(['ps', id], { env: { PROCVISOR_TIMEOUT_MS: '' }, killAfter: 20_000 })
    assert.equal(plain.status, 1, plain.err)
    assert.match(plain.err, /did not answer within 10000 ms/)
    assert.ok(plain.ms >= 10_000 && plain.ms < 15_000, `${plain.ms} ms`)
  })

  it('a deadline that is not a number of milliseconds is a usage error', async () => {
    for (const [args, env] of [[['ls', '--timeout', '0']], [['ls', '--timeout', 'soon']], [['ps', 'x', '--timeout=-5']], [['ls'], { PROCVISOR_TIMEOUT_MS: '1e3' }]]) {
      const r = await cli(args, { env })
      assert.equal(r.status, 2, `${args.join(' ')} ${JSON.stringify(env)}: ${r.err}`)
      assert.match(r.err, /^procvisor: (--timeout|PROCVISOR_TIMEOUT_MS) must be a number of milliseconds/)
    }
  })

  it('logs --follow follows for longer than the deadline: the deadline is for each answer', async () => {
    const { id, pid } = await aside.startIn(
      undefined,
      `const p = await sb.processes.spawn('echo first; sleep 2; echo second')
console.log(JSON.stringify({ pid: p.pid }))`,
    )
    const r = await cli(['logs', id, String(pid), '--follow', '--timeout', '500'])
    assert.equal(r.status, 0, r.err)
    assert.equal(r.out, 'first\nsecond\n')
  })
})
