// Patterns and inputs that come from an agent or from a client of a persistent sandbox: a
// catastrophic regular expression holds nothing, one that needs backtracking is refused with a
// typed error, a terminal write keeps its timeout, and the tools fail with procvisor's typed
// errors, on both procvisor backends.
import { beforeEach, it } from 'node:test'
import assert from 'node:assert/strict'
import { WORKSPACE_TOOLS_PREFIX } from '@mastra/core/workspace'
import { createProcessTools } from 'procvisor/mastra'
import { InvalidProcessOptionError, ProcessNotFoundError } from 'procvisor'
import { describeBackends, perTest } from './backends.mjs'
import { freePort } from './helpers.mjs'

const T = (name) => `${WORKSPACE_TOOLS_PREFIX}_${name}`
const CATASTROPHIC = 'printf "%s!\\n" aaaaaaaaaaaaaaaaaaaaaaaaa; sleep 0.3; echo aaaa; sleep 30'
const sandboxes = (backend) => perTest(backend, { prefix: 'procvisor-untrusted-', defaults: () => ({ env: { PATH: process.env.PATH } }) })

describeBackends('the agent tools with hostile input', ['native', 'persistent'], { timeout: 60_000 }, (backend) => {
  const t = sandboxes(backend)
  let sandbox
  let tools
  beforeEach(async () => {
    sandbox = await t.start()
    tools = createProcessTools(sandbox, { quietMs: 100 })
  })

  it('wait_for_log: a catastrophic pattern matches the later line without holding Node; a backreference is refused', async () => {
    const p = await sandbox.processes.spawn(CATASTROPHIC)
    let last = Date.now()
    let worst = 0
    const tick = setInterval(() => ((worst = Math.max(worst, Date.now() - last)), (last = Date.now())), 10)
    const r = await tools[T('wait_for_log')].execute({ pid: p.pid, pattern: '/(a+)+$/m', timeoutMs: 10_000 }, {})
    clearInterval(tick)
    assert.equal(r.matched, true, JSON.stringify(r))
    assert.equal(r.line, 'aaaa')
    assert.ok(worst < 1000, `Node stalled ${worst} ms`)
    await assert.rejects(
      tools[T('wait_for_log')].execute({ pid: p.pid, pattern: '/(a)\\1/', timeoutMs: 1000 }, {}),
      (e) => e instanceof InvalidProcessOptionError && /linear time/.test(e.message),
    )
    await p.kill()
  })

  it('execute called directly fails with typed errors; a timed-out port wait says it once', async () => {
    await assert.rejects(tools[T('read_logs')].execute({ pid: '999999' }, {}), (e) => e instanceof ProcessNotFoundError && e.code === 'PROCESS_NOT_FOUND')
    await assert.rejects(tools[T('terminal_read')].execute({ terminalId: 'nope' }, {}), ProcessNotFoundError)
    const p = await sandbox.processes.spawn('sleep 30')
    const port = await freePort()
    const r = await tools[T('wait_for_port')].execute({ pid: p.pid, port, timeoutMs: 300 }, {})
    assert.equal(r.ready, false)
    assert.equal(r.message.split('not ready within').length, 2, r.message)
    assert.match(r.message, new RegExp(`port ${port} was not ready within 300 ?ms`))
    await p.kill()
  })

  it('terminal_write keeps its timeout while a program reads none of 10 MB of input', async () => {
    const opened = await tools[T('terminal_open')].execute({ command: 'stty raw -echo; sleep 300' }, {})
    const started = Date.now()
    const r = await tools[T('terminal_write')].execute({ terminalId: opened.terminalId, input: 'x'.repeat(10 * 1024 * 1024), timeoutMs: 3000 }, {})
    const took = Date.now() - started
    // Generous against a loaded machine; before, the call had not returned after 12 s.
    assert.ok(took < 8000, `returned after ${took} ms`)
    assert.match(r.message, /did not take all of the input within 3000 ms/)
    const closed = await tools[T('terminal_close')].execute({ terminalId: opened.terminalId }, {})
    assert.equal(closed.closed, true)
  })
})

// Two clients of one supervisor: a pattern one of them waits on must not hold the other.
describeBackends('a persistent sandbox and a client pattern', ['persistent'], { timeout: 60_000 }, (backend) => {
  const t = sandboxes(backend)

  it("a catastrophic pattern does not make another client's list() wait; a backreference is refused", async () => {
    const a = await t.start()
    const b = await t.start({ id: a.id })
    const p = await a.processes.spawn(CATASTROPHIC)
    const waiting = p.nativeHandle.waitForLog(/(a+)+$/m, { timeout: 10_000 })
    await new Promise((r) => setTimeout(r, 100))
    const t0 = Date.now()
    const listed = await b.processes.list()
    const took = Date.now() - t0
    assert.ok(listed.length >= 1)
    assert.ok(took < 1000, `list() waited ${took} ms`)
    assert.equal((await waiting).match, 'aaaa')
    await assert.rejects(p.nativeHandle.waitForLog(/(a)\1/, { timeout: 1000 }), (e) => e.code === 'INVALID_PROCESS_OPTION' && /linear time/.test(e.message))
    await p.kill()
  })
})
