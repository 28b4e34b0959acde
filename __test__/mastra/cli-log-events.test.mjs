// `procvisor logs` says when a service restarted and when a probe's verdict changed, on stderr
// so that stdout stays the program's bytes; --timestamps puts each line's time before it.
import { describe, it, before, after } from 'node:test'
import assert from 'node:assert/strict'
import * as fs from 'node:fs'
import * as path from 'node:path'
import { tempDir } from './helpers.mjs'
import { procvisor as cli, startElsewhere, freshId, sweep } from './persistent-common.mjs'
import { privateSockets } from './backends.mjs'

privateSockets()
const children = []
let tmp
let id
let pid

const ISO = '\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d\\.\\d{3}Z'

before(async () => {
  tmp = tempDir('procvisor-cli-log-events-')
  id = freshId()
  // Two restarts, each run ready once it printed `up`, and a give-up after the third run.
  const c = startElsewhere(
    children,
    { id, workingDirectory: path.join(tmp, 'wd'), options: ', timeoutMs: 120000' },
    `const h = await sb.processes.spawn('echo up; sleep 0.4; exit 1', {
  name: 'flaky',
  restart: { policy: 'on-failure', maxRestarts: 2, backoffMs: { initial: 50 } },
  readiness: { log: 'up', periodMs: 50 },
})
await h.wait()
console.log(JSON.stringify({ pid: h.pid }))`,
  )
  pid = String((await c.first).pid)
  await c.exited
})
after(async () => {
  await sweep(id)
  for (const c of children) c.kill('SIGKILL')
  fs.rmSync(tmp, { recursive: true, force: true })
})

describe('procvisor logs and the events between the output', () => {
  it('prints a line for each restart and probe verdict on stderr; stdout is the bytes the program wrote', async () => {
    const r = await cli('logs', id, pid)
    assert.equal(r.status, 0, r.err)
    assert.equal(r.out, 'up\nup\nup\n')
    const lines = r.err.split('\n').filter((l) => l.startsWith('---'))
    assert.deepEqual(
      lines.filter((l) => l.includes('restart')),
      ['--- restart 1 (exited with code 1) ---', '--- restart 2 (exited with code 1) ---'],
    )
    assert.ok(lines.filter((l) => l.startsWith('--- readiness passed')).length >= 3, r.err)
    // In the order they happened: ready before the run that was ready ended.
    assert.ok(lines.indexOf('--- restart 1 (exited with code 1) ---') > lines.findIndex((l) => l.startsWith('--- readiness passed')))
  })

  it('--timestamps puts the ISO time of its event before each line, output and events alike, in order', async () => {
    const r = await cli('logs', id, pid, '--timestamps')
    assert.equal(r.status, 0, r.err)
    const out = r.out.split('\n').slice(0, -1)
    assert.equal(out.length, 3)
    for (const l of out) assert.match(l, new RegExp(`^${ISO} up$`))
    const events = r.err.split('\n').filter((l) => l.includes(' --- '))
    for (const l of events) assert.match(l, new RegExp(`^${ISO} --- (restart \\d \\(exited with code 1\\)|readiness (passed|failed)[^]*) ---$`))
    const times = [...out, ...events].map((l) => Date.parse(l.slice(0, 24)))
    assert.ok(times.every((t) => Number.isFinite(t)))
    // The restarts come between the runs' output.
    const at = (l) => Date.parse(l.slice(0, 24))
    const restarts = events.filter((l) => l.includes('restart'))
    assert.equal(restarts.length, 2)
    assert.ok(at(out[0]) <= at(restarts[0]) && at(restarts[0]) <= at(out[1]) && at(out[1]) <= at(restarts[1]) && at(restarts[1]) <= at(out[2]))
  })

  it('every process at once: the events are lines of their own, with the name and with --timestamps the time', async () => {
    const r = await cli('logs', id, '--timestamps')
    assert.equal(r.status, 0, r.err)
    const out = r.out.split('\n').slice(0, -1)
    assert.equal(out.length, 3)
    for (const l of out) assert.match(l, new RegExp(`^flaky \\| ${ISO} up$`))
    const restarts = r.err.split('\n').filter((l) => l.includes('--- restart'))
    assert.equal(restarts.length, 2)
    for (const l of restarts) assert.match(l, new RegExp(`^flaky \\| ${ISO} --- restart \\d \\(exited with code 1\\) ---$`))
    const plain = await cli('logs', id)
    assert.equal(plain.out, 'flaky | up\nflaky | up\nflaky | up\n')
    assert.ok(plain.err.includes('flaky | --- restart 2 (exited with code 1) ---\n'), plain.err)
  })
})
