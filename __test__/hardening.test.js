'use strict'
// Edges of the supervision guarantees: worker threads that go away with calls in flight, timeouts
// and kills that must still reach a group after its root exited or left it, close() racing
// launches, the OS refusing an argument list, and the cost of watching groups that outlive their
// roots. Real processes only; what is alive is read from /proc, never from procvisor.
const test = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const crypto = require('node:crypto')
const { spawn, execFile, execFileSync } = require('node:child_process')
const { ProcessManager } = require('..')
const { alive, eventually, markedPids, nativeCpuMsSince, nativeThreads } = require('./helpers')

const WORKER_FIXTURE = path.join(__dirname, 'fixtures', 'worker-terminate.js')


/** `{ comm, pgrp }` of a pid from /proc/<pid>/stat, or undefined once it is gone. */
function stat(pid) {
  try {
    const s = fs.readFileSync(`/proc/${pid}/stat`, 'utf8')
    const comm = s.slice(s.indexOf('(') + 1, s.lastIndexOf(')'))
    const fields = s.slice(s.lastIndexOf(')') + 2).split(' ')
    return { comm, pgrp: Number(fields[2]) }
  } catch {
    return undefined
  }
}

/** Rejects with a message naming `what` when `promise` has not settled within `ms`. */
function within(promise, ms, what) {
  let timer
  const bound = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not settle within ${ms} ms`)), ms)
  })
  return Promise.race([promise, bound]).finally(() => clearTimeout(timer))
}

// The long sleeps here are `sleep 45`, a duration no other test kills by name: a sleep killed
// from outside would make a hole look closed.

// Every marker handed out is swept at the end, so a failing test leaves nothing behind. Leftovers
// are killed by pid only: some of them sit in this Node's own process group.
const markers = []
function newMarker() {
  const m = crypto.randomUUID()
  markers.push(m)
  return m
}
function killMarked(marker) {
  for (const pid of markedPids(marker)) {
    try {
      process.kill(pid, 'SIGKILL')
    } catch {}
  }
}
const managers = []
function manager(marker) {
  const pm = new ProcessManager({ workingDirectory: '/tmp', env: { PROCVISOR_MARKER: marker } })
  managers.push(pm)
  return pm
}
async function cleanup(pm, marker) {
  await within(pm.close(), 3000, 'close()').catch(() => {})
  killMarked(marker)
}
test.after(async () => {
  for (const m of markers) killMarked(m)
  await Promise.all(managers.map((pm) => within(pm.close(), 3000, 'close()').catch(() => {})))
  for (const m of markers) killMarked(m)
})

/** The sleep a test's shell left behind, found by its marker. */
async function markedSleep(marker) {
  const pid = await eventually(() => markedPids(marker).find((p) => stat(p)?.comm === 'sleep'), 3000)
  assert.ok(pid, 'the backgrounded sleep never appeared')
  return pid
}

// ---- worker threads ----------------------------------------------------------------------------

/** Runs the worker fixture on `node`; resolves with how that Node ended and what it printed. */
function runWorkerFixture(node, marker, limitMs) {
  return new Promise((resolve) => {
    const child = spawn(node, [WORKER_FIXTURE, marker, '20'], { stdio: ['ignore', 'pipe', 'pipe'] })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (d) => (stdout += d))
    child.stderr.on('data', (d) => (stderr += d))
    const timer = setTimeout(() => child.kill('SIGKILL'), limitMs)
    child.on('close', (code, signal) => {
      clearTimeout(timer)
      resolve({ code, signal, stdout, stderr })
    })
  })
}

async function assertWorkersTerminateCleanly(node) {
  const marker = newMarker()
  const r = await runWorkerFixture(node, marker, 60_000)
  assert.deepEqual(
    { code: r.code, signal: r.signal },
    { code: 0, signal: null },
    `the Node running the workers ended with code ${r.code}, signal ${r.signal}\n${r.stderr.slice(-2000)}`,
  )
  const summary = JSON.parse(r.stdout.trim().split('\n').pop())
  assert.equal(summary.rounds, 20)
  assert.deepEqual(summary.workerErrors, [])
  assert.deepEqual(summary.afterwards, { exitCode: 0, stdout: 'ok\n' })
  assert.equal(summary.unfinished, 0, 'processes of terminated workers left unfinished')
  assert.equal(summary.running, 0, 'processes of terminated workers still running while Node runs')
  const gone = await eventually(() => markedPids(marker).length === 0, 2000)
  assert.ok(gone, `left behind: ${markedPids(marker)}`)
}

test('after the runtime of an ended worker, trees that outlive their roots are still seen to end (both containments)', { timeout: 60_000 }, async (t) => {
  // The worker is the addon's first user: its end shuts napi-rs's runtime down, and the main
  // thread's calls run on a new one. What watched cgroups and scanned groups must not have died
  // with the first.
  const out = await new Promise((resolve, reject) => {
    execFile(process.execPath, [path.join(__dirname, 'fixtures', 'runtime-restart.js')], { timeout: 50_000 }, (err, stdout, stderr) =>
      err ? reject(new Error(`${err.message}\n${stderr}`)) : resolve(JSON.parse(stdout.trim().split('\n').pop())),
    )
  })
  if (!('cgroup' in out.afterwards)) t.diagnostic('no cgroup on this machine: process groups only')
  for (const phase of ['inWorker', 'afterwards']) {
    assert.ok('process-group' in out[phase], JSON.stringify(out))
    for (const [containment, ms] of Object.entries(out[phase])) {
      assert.notEqual(ms, null, `${phase}, ${containment}: the tree was not over within 10 s (${JSON.stringify(out)})`)
    }
  }
})

test('terminating workers with calls in flight never crashes Node and leaves no process (this Node)', { timeout: 90_000 }, async () => {
  await assertWorkersTerminateCleanly(process.execPath)
})

test('terminating workers with calls in flight never crashes Node and leaves no process (Node 24)', { timeout: 240_000 }, async (t) => {
  // npx fetches Node 24 once (it is cached afterwards); the binary is then run directly, so its
  // exit code and signal are its own rather than what npm reports for it.
  let node
  try {
    const out = await new Promise((resolve, reject) => {
      execFile(
        'npx',
        ['-y', '-p', 'node@24', 'node', '-p', 'process.version + " " + process.execPath'],
        { timeout: 120_000, cwd: os.tmpdir() },
        (err, stdout, stderr) => {
          if (!err) return resolve(String(stdout))
          reject(new Error(`${err.message.split('\n')[0]} ${String(stderr).trim().slice(-300)}`.trim()))
        },
      )
    })
    const line = out.trim().split('\n').pop()
    const version = line.slice(0, line.indexOf(' '))
    if (!version.startsWith('v24.')) throw new Error(`npx gave Node ${JSON.stringify(line)}`)
    node = line.slice(version.length + 1)
  } catch (e) {
    t.skip(`Node 24 could not be fetched: ${e.message}`)
    return
  }
  await assertWorkersTerminateCleanly(node)
})

// ---- a timeout bounds the whole group --------------------------------------------------------

test('a timeout still ends the group after the root exited (Mastra surface: 124, timedOut)', { timeout: 30_000 }, async () => {
  const marker = newMarker()
  const pm = manager(marker)
  try {
    const t0 = Date.now()
    const h = await pm.spawn('sleep 45 & echo started', { timeout: 300 })
    const sleep = await markedSleep(marker)
    const r = await within(h.wait(), 10_000, 'wait()')
    const took = Date.now() - t0
    assert.equal(r.exitCode, 124)
    assert.equal(r.timedOut, true)
    assert.ok(r.stdout.includes('started'), `stdout: ${JSON.stringify(r.stdout)}`)
    assert.ok(took < 10_000, `took ${took} ms`)
    assert.ok(await eventually(() => !alive(sleep), 1000), `the backgrounded sleep ${sleep} outlived the timeout`)
  } finally {
    await cleanup(pm, marker)
  }
})

test('a timeout still ends the group after the root exited (Processes API: timedOut, exited)', { timeout: 30_000 }, async () => {
  const marker = newMarker()
  const pm = manager(marker)
  try {
    const t0 = Date.now()
    const p = await pm.exec(['sh', '-c', 'sleep 45 & echo started'], { timeout: 300 })
    const sleep = await markedSleep(marker)
    const exit = await p.waitForExit({ timeout: 10_000 })
    assert.equal(exit.timedOut, true)
    assert.ok(Date.now() - t0 < 10_000, `took ${Date.now() - t0} ms`)
    assert.equal((await p.status()).state, 'exited')
    // waitForExit means the whole group is gone.
    assert.equal(alive(sleep), false, `the backgrounded sleep ${sleep} outlived the timeout`)
  } finally {
    await cleanup(pm, marker)
  }
})

test('a timeout still ends the group when the surviving grandchild does not hold the pipes', { timeout: 30_000 }, async () => {
  const marker = newMarker()
  const pm = manager(marker)
  try {
    const t0 = Date.now()
    const p = await pm.exec(['sh', '-c', 'sleep 45 >/dev/null 2>&1 & exit 0'], { timeout: 300 })
    const sleep = await markedSleep(marker)
    const exit = await p.waitForExit({ timeout: 10_000 })
    assert.equal(exit.timedOut, true)
    assert.ok(Date.now() - t0 < 10_000, `took ${Date.now() - t0} ms`)
    assert.equal(alive(sleep), false, `the backgrounded sleep ${sleep} outlived the timeout`)
  } finally {
    await cleanup(pm, marker)
  }
})

// ---- close() and launches in flight -------------------------------------------------------------

test('close() waits for launches that were in flight: nothing is alive once it resolves', { timeout: 60_000 }, async () => {
  // Repeated because how far the launches got when close() is called varies from run to run.
  for (let round = 0; round < 5; round++) {
    const marker = newMarker()
    const pm = manager(marker)
    try {
      const launches = [
        ...Array.from({ length: 20 }, () => pm.spawn('sleep 45')),
        ...Array.from({ length: 20 }, () => pm.exec(['sleep', '45'])),
      ]
      const settled = Promise.allSettled(launches)
      await pm.close()
      const left = markedPids(marker)
      const outcomes = await within(settled, 10_000, 'the launches')
      assert.deepEqual(left, [], `round ${round}: alive right after close() resolved: ${left.length} of 40`)
      for (const o of outcomes) {
        if (o.status === 'rejected') assert.equal(o.reason && o.reason.code, 'PROCESS_MANAGER_CLOSED', String(o.reason))
      }
    } finally {
      await cleanup(pm, marker)
    }
  }
})

// ---- a root that leaves its process group ---------------------------------------------------------

const HAS_PERL = (() => {
  try {
    execFileSync('sh', ['-c', 'command -v perl'], { stdio: 'ignore' })
    return true
  } catch {
    return false
  }
})()
// Joins the process group of its parent (this Node), then becomes `sleep 45`.
const LEAVE_GROUP = 'setpgrp(0, getpgrp(getppid())) or die "setpgrp: $!"; exec "sleep", "45"'

function ownPgrp() {
  return stat(process.pid).pgrp
}

/** Waits until `pid` is the sleep, in this Node's process group, and asserts it got there. */
async function assertLeftItsGroup(pid) {
  const moved = await eventually(() => {
    const s = stat(pid)
    return s && s.comm === 'sleep' && s.pgrp === ownPgrp()
  }, 3000)
  const s = stat(pid)
  assert.ok(moved, `root ${pid} did not leave its group: ${JSON.stringify(s)}`)
  assert.notEqual(s.pgrp, pid)
}

function leaverTest(name, fn) {
  test(`a root that leaves its process group is still reached: ${name}`, { timeout: 30_000 }, async (t) => {
    if (!HAS_PERL) {
      t.skip('perl is not installed')
      return
    }
    const marker = newMarker()
    const pm = manager(marker)
    try {
      await fn(pm)
    } finally {
      await cleanup(pm, marker)
    }
  })
}

leaverTest('kill() (Mastra surface)', async (pm) => {
  const h = await pm.spawn(`exec perl -e '${LEAVE_GROUP}'`)
  const pid = Number(h.pid)
  await assertLeftItsGroup(pid)
  assert.equal(await h.kill(), true)
  assert.ok(await eventually(() => !alive(pid), 2000), `root ${pid} survived kill()`)
  const r = await within(h.wait(), 5000, 'wait()')
  assert.equal(r.exitCode, 128)
})

leaverTest('a timeout (Mastra surface: 124)', async (pm) => {
  const t0 = Date.now()
  const h = await pm.spawn(`exec perl -e '${LEAVE_GROUP}'`, { timeout: 300 })
  const pid = Number(h.pid)
  await assertLeftItsGroup(pid)
  const r = await within(h.wait(), 10_000, 'wait()')
  assert.equal(r.exitCode, 124)
  assert.equal(r.timedOut, true)
  assert.ok(Date.now() - t0 < 10_000, `took ${Date.now() - t0} ms`)
  assert.ok(await eventually(() => !alive(pid), 1000), `root ${pid} outlived its timeout`)
})

leaverTest('a timeout (Processes API: timedOut)', async (pm) => {
  const t0 = Date.now()
  const p = await pm.exec(['perl', '-e', LEAVE_GROUP], { timeout: 300 })
  await assertLeftItsGroup(p.pid)
  const exit = await p.waitForExit({ timeout: 10_000 })
  assert.equal(exit.timedOut, true)
  assert.ok(Date.now() - t0 < 10_000, `took ${Date.now() - t0} ms`)
  assert.equal(alive(p.pid), false, `root ${p.pid} outlived its timeout`)
})

leaverTest('close()', async (pm) => {
  const h = await pm.spawn(`exec perl -e '${LEAVE_GROUP}'`)
  const p = await pm.exec(['perl', '-e', LEAVE_GROUP])
  const pids = [Number(h.pid), p.pid]
  for (const pid of pids) await assertLeftItsGroup(pid)
  await within(pm.close(), 5000, 'close()')
  assert.deepEqual(pids.filter(alive), [], 'alive after close() resolved')
})

leaverTest('kill(9) (Processes API)', async (pm) => {
  const p = await pm.exec(['perl', '-e', LEAVE_GROUP])
  await assertLeftItsGroup(p.pid)
  await p.kill(9)
  assert.ok(await eventually(() => !alive(p.pid), 2000), `root ${p.pid} survived kill(9)`)
  const exit = await p.waitForExit({ timeout: 5000 })
  assert.equal(exit.signal, 9)
})

// ---- the OS refusing the argument list ------------------------------------------------------------

test('an argument list the OS refuses is reported as E2BIG, and the manager keeps working', async () => {
  const marker = newMarker()
  const pm = manager(marker)
  try {
    const big = 'x'.repeat(300_000) // one argument above MAX_ARG_STRLEN (128 KiB)
    for (const [what, launch] of [
      ['exec', () => pm.exec(['/bin/echo', big])],
      ['spawn', () => pm.spawn(`echo ${big}`)],
    ]) {
      await assert.rejects(launch(), (e) => {
        assert.equal(e.code, 'PROCESS_SPAWN_FAILED', `${what}: ${e.message}`)
        assert.match(e.message, /E2BIG/, `${what}: ${e.message}`)
        return true
      })
    }
    const p = await pm.exec(['true'])
    assert.equal((await p.waitForExit({ timeout: 5000 })).code, 0)
  } finally {
    await cleanup(pm, marker)
  }
})

// ---- watching groups costs nothing while they idle -----------------------------------------------

test('200 groups whose roots exited while a grandchild lives cost at most 1% of one core', { timeout: 90_000 }, async (t) => {
  const marker = newMarker()
  const pm = manager(marker)
  try {
    const procs = await Promise.all(Array.from({ length: 200 }, () => pm.exec(['sh', '-c', 'sleep 60 & exit 0'])))
    const rootsGone = await eventually(() => procs.every((p) => !alive(p.pid)), 10_000, 50)
    assert.ok(rootsGone, 'the roots did not exit')
    const sleeps = markedPids(marker)
    assert.equal(sleeps.length, 200, 'every group keeps its sleep')
    // Only the idle cost is wanted: the launches' own work must be over before measuring.
    await new Promise((r) => setTimeout(r, 5500))
    // procvisor's own threads: the whole process would also count V8's collection of the
    // launches' garbage, which comes when it will.
    const before = nativeThreads()
    const t0 = process.hrtime.bigint()
    await new Promise((r) => setTimeout(r, 3000))
    const cpuMs = nativeCpuMsSince(before)
    const wallMs = Number(process.hrtime.bigint() - t0) / 1e6
    const measured = `${cpuMs.toFixed(1)} ms of procvisor's CPU in ${wallMs.toFixed(0)} ms (${((cpuMs / wallMs) * 100).toFixed(1)}% of one core) while 200 groups idled`
    t.diagnostic(measured)
    assert.ok(cpuMs <= 30, measured)
    await within(pm.close(), 15_000, 'close()')
    assert.deepEqual(markedPids(marker), [], 'alive after close() resolved')
  } finally {
    await cleanup(pm, marker)
  }
})

// A pending promise keeps Node alive (an awaited exit is often all a script has left to do);
// none pending, Node is free to exit even with a process running (it is killed on the way out).
test('an awaited exitCode keeps Node alive; an unobserved process does not, once nothing is pending', async () => {
  const root = path.join(__dirname, '..')
  const script = `
    const { ProcessManager } = require(${JSON.stringify(root)})
    const pm = new ProcessManager()
    pm.exec(['/bin/sleep', '0.3']).then((p) => p.exitCode).then((code) => {
      console.log('exited ' + code)
      return pm.exec(['/bin/sleep', '60'])
    }).then((p) => console.log('started ' + p.pid))`
  const started = Date.now()
  const out = await new Promise((resolve, reject) =>
    execFile(process.execPath, ['-e', script], { timeout: 30_000 }, (err, stdout) => (err ? reject(err) : resolve(stdout))),
  )
  const lines = out.trim().split('\n')
  assert.equal(lines[0], 'exited 0', 'Node stayed alive for the awaited exit')
  const pid = Number(lines[1].replace('started ', ''))
  assert.ok(pid > 0, out)
  // Node left by itself, long before the 60 s sleep would have ended, and took the sleep with it.
  assert.ok(Date.now() - started < 30_000)
  assert.ok(await eventually(() => !alive(pid), 5000), 'the unobserved sleep died with its Node')
})
