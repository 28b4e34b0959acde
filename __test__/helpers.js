'use strict'
// Shared test helpers: real processes only.
const fs = require('node:fs')
const net = require('node:net')
const assert = require('node:assert/strict')

/** Directories `tempDir` made, removed when this test file's process exits. */
const madeDirs = []

/** Removes `dir` and what is in it, whatever modes a test left on its directories. */
function removeTree(dir) {
  try {
    fs.rmSync(dir, { recursive: true, force: true })
  } catch {
    const open = (p) => {
      try {
        if (!fs.lstatSync(p).isDirectory()) return
        fs.chmodSync(p, 0o700)
        for (const e of fs.readdirSync(p)) open(`${p}/${e}`)
      } catch {}
    }
    open(dir)
    fs.rmSync(dir, { recursive: true, force: true })
  }
}

/**
 * A fresh real (symlink-free) temporary directory, removed with what is in it when this test
 * file's process exits: a run of the suites leaves nothing in the system's temporary directory.
 */
function tempDir(prefix = 'procvisor-test-') {
  const os = require('node:os')
  const path = require('node:path')
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), prefix)))
  if (madeDirs.length === 0) {
    process.on('exit', () => {
      for (const d of madeDirs) {
        try {
          removeTree(d)
        } catch {}
      }
    })
  }
  madeDirs.push(dir)
  return dir
}

/** Is `pid` a live process (zombies count as dead)? */
function alive(pid) {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8')
    const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3)
    return state !== 'Z' && state !== 'X'
  } catch {
    return false
  }
}

/** The name `pid` runs under (`/proc/<pid>/comm`), or null once it is gone. */
function commOf(pid) {
  try {
    return fs.readFileSync(`/proc/${pid}/comm`, 'utf8').trim()
  } catch {
    return null
  }
}

/** Polls `fn` until it returns truthy or `ms` pass; returns the last value. */
async function eventually(fn, ms = 3000, step = 20) {
  const end = Date.now() + ms
  for (;;) {
    const v = await fn()
    if (v || Date.now() > end) return v
    await new Promise((r) => setTimeout(r, step))
  }
}

/** Pids of live processes whose command line contains `marker`. */
function pidsWith(marker) {
  const out = []
  for (const d of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue
    try {
      const cmd = fs.readFileSync(`/proc/${d}/cmdline`, 'utf8').replace(/\0/g, ' ')
      if (cmd.includes(marker) && alive(Number(d)) && Number(d) !== process.pid) out.push(Number(d))
    } catch {}
  }
  return out
}

/** Live pids whose environment holds PROCVISOR_MARKER=<marker>. */
function markedPids(marker) {
  const needle = `PROCVISOR_MARKER=${marker}`
  const out = []
  for (const d of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue
    try {
      if (fs.readFileSync(`/proc/${d}/environ`, 'utf8').split('\0').includes(needle) && alive(Number(d))) out.push(Number(d))
    } catch {}
  }
  return out
}

function rssBytes() {
  const s = fs.readFileSync('/proc/self/status', 'utf8')
  return Number(/VmRSS:\s+(\d+) kB/.exec(s)[1]) * 1024
}

/**
 * A copy of the files `require('procvisor')` loads, plus `extra` paths of this checkout (each at
 * the same relative place), in a fresh directory every user can read; removed after test `t`.
 * A test that runs Node as another user ("nobody") loads this copy: the checkout itself may sit
 * under a directory only its owner can enter.
 */
function readablePackageCopy(t, extra = []) {
  const os = require('node:os')
  const path = require('node:path')
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'procvisor-pkg-'))
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }))
  const top = path.join(__dirname, '..')
  const files = ['package.json', 'index.js', 'binding.js', 'lib', ...fs.readdirSync(top).filter((f) => f.endsWith('.node')), ...extra]
  for (const f of files) fs.cpSync(path.join(top, f), path.join(dir, f), { recursive: true })
  const open = (p) => {
    const isDir = fs.statSync(p).isDirectory()
    fs.chmodSync(p, isDir ? 0o755 : 0o644)
    if (isDir) for (const e of fs.readdirSync(p)) open(path.join(p, e))
  }
  open(dir)
  return dir
}

/**
 * CPU time, in ns, of each thread of procvisor's own (its runtime's, named `tokio-*`, and its
 * launcher's, scanner's and cgroup reader's, named `procvisor-*`), from their schedstat. The
 * whole process's `cpuUsage()` would also count V8's garbage collection of earlier launches'
 * garbage, which runs at a time of its own and is no cost of idle processes; nothing of
 * procvisor runs on the JS thread while no process writes output or changes state.
 */
function nativeThreads() {
  const ns = new Map()
  for (const tid of fs.readdirSync('/proc/self/task')) {
    try {
      const name = fs.readFileSync(`/proc/self/task/${tid}/comm`, 'utf8')
      if (!name.startsWith('tokio') && !name.startsWith('procvisor')) continue
      ns.set(tid, Number(fs.readFileSync(`/proc/self/task/${tid}/schedstat`, 'utf8').split(' ')[0]))
    } catch {} // a thread that ended in between
  }
  if (ns.size === 0) throw new Error("procvisor's threads were not found by name")
  return ns
}

/** The ms of CPU procvisor's threads used since `before`; a thread born since counts whole. */
function nativeCpuMsSince(before) {
  let ns = 0
  for (const [tid, now] of nativeThreads()) ns += now - (before.get(tid) || 0)
  return ns / 1e6
}

/** A loopback port nothing listens on: the kernel's pick, released at once. */
function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer()
    srv.on('error', reject)
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address()
      srv.close(() => resolve(port))
    })
  })
}

/** The error `promise` rejects with; the test fails if it resolves. */
async function rejection(promise) {
  try {
    await promise
  } catch (e) {
    return e
  }
  assert.fail('the promise did not reject')
}

/**
 * A WebSocket client of a terminal served with connect(): it gathers the output (binary frames)
 * and the control frames (text frames after a NUL, JSON), and records the close code.
 */
function terminalClient(port, query = '') {
  const { WebSocket } = require('ws')
  const ws = new WebSocket(`ws://127.0.0.1:${port}/${query}`)
  const c = { ws, output: '', controls: [], closed: null }
  ws.on('message', (data, isBinary) => {
    if (isBinary) c.output += data.toString()
    else c.controls.push(JSON.parse(data.toString().slice(1)))
  })
  ws.on('close', (code) => (c.closed = code))
  c.open = new Promise((r) => ws.once('open', r))
  return c
}

/** GET `pathname` of the server at `url` (a web view's) with raw `headers`: its status, headers and body. */
function httpGet(url, pathname, headers = {}) {
  const u = new URL(url)
  return new Promise((resolve, reject) => {
    const req = require('node:http').request({ host: u.hostname, port: u.port, path: pathname, headers }, (res) => {
      let body = ''
      res.on('data', (d) => (body += d))
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body }))
    })
    req.on('error', reject)
    req.end()
  })
}

module.exports = { tempDir, httpGet, terminalClient, alive, freePort, rejection, commOf, eventually, markedPids, nativeCpuMsSince, nativeThreads, pidsWith, readablePackageCopy, rssBytes }
