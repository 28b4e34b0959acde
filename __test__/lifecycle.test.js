'use strict'
// Better than Mastra: nothing outlives Node, no zombies, pipes held by a grandchild cannot hang
// wait(), a SIGTERM-ignoring child dies after its grace, and memory stays bounded.
const test = require('node:test')
const assert = require('node:assert/strict')
const path = require('node:path')
const { spawn } = require('node:child_process')
const fs = require('node:fs')
const crypto = require('node:crypto')
const { ProcessManager } = require('..')
const { alive, eventually, markedPids, rssBytes } = require('./helpers')

const pm = new ProcessManager({ workingDirectory: '/tmp' })
test.after(() => pm.close())


function runFixture(mode, containment = 'auto') {
  const marker = crypto.randomUUID()
  const child = spawn(process.execPath, [path.join(__dirname, 'fixtures', 'exit-path.js'), mode, marker, containment], { stdio: ['pipe', 'pipe', 'pipe'] })
  let out = ''
  let err = ''
  child.stderr.on('data', (d) => (err += d))
  const ready = new Promise((resolve, reject) => {
    child.stdout.on('data', (d) => {
      out += d
      const m = /ready ([\d ]+)\n/.exec(out)
      if (m) resolve(m[1].trim().split(' ').map(Number))
    })
    child.on('exit', () => reject(new Error(`fixture exited before ready: ${err}`)))
  })
  const exited = new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })))
  return { child, marker, ready, exited }
}

const endings = ['natural', 'exit', 'uncaught', 'signal:SIGTERM', 'signal:SIGINT', 'signal:SIGKILL', 'worker'].map((mode) => [mode, 'auto'])
// Without cgroups only the watchdog's list of process groups reaches the trees after a SIGKILL.
endings.push(['signal:SIGKILL', 'process-group'], ['worker', 'process-group'])
for (const [mode, containment] of endings) {
  test(`no child survives Node ending by ${mode} (containment: ${containment})`, async () => {
    const f = runFixture(mode, containment)
    const roots = await f.ready
    const marked = markedPids(f.marker)
    assert.ok(marked.length >= 4, `expected roots and grandchildren alive, saw ${marked.length}`)
    for (const pid of roots) assert.ok(marked.includes(pid))
    if (mode.startsWith('signal:')) f.child.kill(mode.slice(7))
    else f.child.stdin.write('go\n')
    if (mode !== 'worker') await f.exited
    const t0 = Date.now()
    const gone = await eventually(() => markedPids(f.marker).length === 0, 1000, 10)
    assert.ok(gone, `left behind after ${Date.now() - t0}ms: ${markedPids(f.marker)}`)
    if (mode === 'worker') {
      f.child.kill('SIGKILL')
      await f.exited
    }
  })
}

test('no zombies: every root is reaped once its wait settles', async () => {
  const hs = await Promise.all(Array.from({ length: 50 }, () => pm.spawn('exit 0')))
  await Promise.all(hs.map((h) => h.wait()))
  const ps = await Promise.all(Array.from({ length: 20 }, () => pm.exec(['true'])))
  await Promise.all(ps.map((p) => p.waitForExit()))
  const zombies = [...hs.map((h) => Number(h.pid)), ...ps.map((p) => p.pid)].filter((pid) => fs.existsSync(`/proc/${pid}`) && !alive(pid))
  assert.deepEqual(zombies, [])
})

test('a grandchild that holds the pipes outside the group cannot hang wait()', async () => {
  // A duration of this run's own: the cleanup must not kill another run's `sleep 30`.
  const nap = `30.${process.pid}`
  const h = await pm.spawn(`setsid sleep ${nap} & echo started`)
  const r = await Promise.race([h.wait(), new Promise((_, rej) => setTimeout(() => rej(new Error('wait() hung')), 5000))])
  assert.equal(r.exitCode, 0)
  assert.equal(r.stdout, 'started\n')
  spawn('pkill', ['-f', `^sleep ${nap.replace('.', '\\.')}$`])
})

test('a child that ignores SIGTERM is dead within the grace period after its timeout', async () => {
  const h = await pm.spawn("trap '' TERM; sleep 30 & trap '' TERM; while :; do sleep 0.05; done", { timeout: 100, gracePeriod: 300 })
  const t0 = Date.now()
  const r = await h.wait()
  const took = Date.now() - t0
  assert.equal(r.exitCode, 124)
  assert.equal(r.timedOut, true)
  assert.ok(took < 100 + 300 + 1000, `took ${took}ms`)
  assert.equal(alive(Number(h.pid)), false)
})

test('1 GiB of output at the default retention keeps RSS growth under 100 MB', async () => {
  global.gc && global.gc()
  const before = rssBytes()
  let peak = before
  const timer = setInterval(() => (peak = Math.max(peak, rssBytes())), 20)
  const h = await pm.spawn('head -c 1073741824 /dev/zero')
  const r = await h.wait()
  clearInterval(timer)
  peak = Math.max(peak, rssBytes())
  assert.equal(r.stdout.length, 1048576)
  assert.equal(r.stdoutDroppedBytes, 1073741824 - 1048576)
  assert.ok(peak - before < 100 * 1024 * 1024, `RSS grew by ${((peak - before) / 1048576).toFixed(1)} MB`)
})

test('1 GiB through an onStdout listener arrives complete, with bounded memory', async () => {
  const before = rssBytes()
  let peak = before
  let bytes = 0
  const timer = setInterval(() => (peak = Math.max(peak, rssBytes())), 20)
  const h = await pm.spawn('head -c 1073741824 /dev/zero', { maxRetainedBytes: 0, onStdout: (d) => (bytes += d.length) })
  await h.wait()
  clearInterval(timer)
  assert.equal(bytes, 1073741824)
  assert.ok(peak - before < 200 * 1024 * 1024, `RSS grew by ${((peak - before) / 1048576).toFixed(1)} MB`)
})
