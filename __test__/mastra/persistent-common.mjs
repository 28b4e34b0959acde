// What the persistent sandbox tests share: Node processes that start or attach to a
// sandbox, fresh ids, and the sweep that leaves no supervisor running after a test.
import assert from 'node:assert/strict'
import { execFile, spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import * as fs from 'node:fs'
import * as net from 'node:net'
import * as os from 'node:os'
import { afterEach, beforeEach } from 'node:test'
import * as path from 'node:path'
import { createRequire } from 'node:module'
import { ROOT } from './helpers.mjs'

const require = createRequire(import.meta.url)
const { Connection } = require('../../lib/persistent/client/client.js')
const location = require('../../lib/persistent/wire/location.js')
const protocol = require('../../lib/persistent/wire/protocol.js')
const { FrameReader } = require('../../lib/persistent/wire/reader.js')

/** A fresh id, so that no two tests (or runs) share a supervisor. */
export const freshId = () => `persist-${randomBytes(6).toString('hex')}`

export const IMPORT = `import { NativeLocalSandbox } from ${JSON.stringify(path.join(ROOT, 'mastra/index.mjs'))}\n`

/**
 * Runs `code` (an ES module) in a new Node process; `first` resolves with its first JSON line.
 * Every child is recorded in `children` for the sweep.
 */
export function child(children, code, { cwd = ROOT, env = process.env } = {}) {
  const p = spawn(process.execPath, ['--input-type=module', '-e', code], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] })
  children.push(p)
  let out = ''
  let err = ''
  p.stderr.on('data', (d) => (err += d))
  const first = new Promise((resolve, reject) => {
    p.stdout.on('data', (d) => {
      out += d
      const nl = out.indexOf('\n')
      if (nl >= 0) resolve(JSON.parse(out.slice(0, nl)))
    })
    p.once('close', (code) => reject(new Error(`the child exited (${code}) before printing: ${err}`)))
  })
  return { proc: p, first, exited: new Promise((r) => p.once('close', (code, signal) => r({ code, signal, err }))) }
}

/**
 * Starts persistent sandbox `id` in `workingDirectory` from a Node process of its own, which runs
 * `script` after start() (with `sb` in scope) and exits, the sandbox running on. `options` is
 * more of the constructor's options, as source text (`, timeoutMs: 1000`).
 */
export function startElsewhere(children, { id, workingDirectory, options = '' }, script) {
  return child(
    children,
    `${IMPORT}const sb = new NativeLocalSandbox({ id: ${JSON.stringify(id)}, workingDirectory: ${JSON.stringify(workingDirectory)}, persistent: true, env: { PATH: process.env.PATH }${options} })
await sb.start()
${script}`,
  )
}

/**
 * Persistent sandboxes started in this Node process for the tests of one file, each destroyed
 * after its test (and its supervisor shut down through a fresh connection, should the test have
 * broken its own): `start()` resolves with the sandbox and the socket its client found.
 */
export function sandboxesPerTest(prefix) {
  let tmp
  const made = []
  beforeEach(() => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), `procvisor-${prefix}-`))
  })
  afterEach(async () => {
    for (const { sb, socketPath } of made.splice(0)) {
      await sb._destroy().catch(() => {})
      const conn = await Connection.open(socketPath).catch(() => null)
      if (conn) await conn.call('shutdown').catch(() => {})
    }
    fs.rmSync(tmp, { recursive: true, force: true })
  })
  return {
    /** This test's directory, made before it and removed after it. */
    get dir() {
      return tmp
    },
    async start(options = {}) {
      const { NativeLocalSandbox } = await import('procvisor/mastra')
      const id = `${prefix}-${randomBytes(6).toString('hex')}`
      const sb = new NativeLocalSandbox({ id, workingDirectory: path.join(tmp, 'wd'), persistent: true, timeoutMs: 120_000, ...options })
      await sb.start()
      const socketPath = sb._runtime.connection().socketPath
      made.push({ sb, socketPath })
      return { sb, socketPath }
    },
  }
}

/** The command line, as a user runs it. */
export const BIN = path.join(ROOT, 'bin/procvisor.js')

/** Runs `procvisor ...args`; resolves with its exit status, stdout (`out` as text, `stdout` as bytes) and stderr. */
export function procvisor(...args) {
  return new Promise((resolve) => {
    execFile(process.execPath, [BIN, ...args], { encoding: 'buffer', maxBuffer: 64 << 20 }, (error, stdout, stderr) => {
      resolve({ status: error ? error.code : 0, stdout, out: stdout.toString(), err: stderr.toString() })
    })
  })
}

/** The socket of sandbox `id` for a Node process with the environment `env`. */
export const socketFor = (id, env = process.env) => location.socketPath(id, location.socketDirectory(env))

/** Stops, through a fresh connection, a supervisor a failed test left running for `id`. */
export async function sweep(id, env = process.env) {
  let sock
  try {
    sock = socketFor(id, env)
  } catch {
    return
  }
  const conn = await Connection.open(sock).catch(() => null)
  if (conn) await conn.call('shutdown').catch(() => {})
}

/** The live processes whose command line contains `needle`. */
export function processesWith(needle) {
  const out = []
  for (const d of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(d) || Number(d) === process.pid) continue
    try {
      if (fs.readFileSync(`/proc/${d}/cmdline`, 'utf8').includes(needle)) out.push(Number(d))
    } catch {}
  }
  return out
}

/**
 * A client that speaks raw frames: `hello(extra)` greets (`extra`: more of the hello, as
 * `{ shared: true }`), `send()` writes a message or raw bytes, `next()` resolves with the next
 * frame or `'closed'`. It gives back the credit of the output it reads, as procvisor's client does.
 */
export function raw(socketPath) {
  const socket = net.connect(socketPath)
  const frames = new FrameReader()
  const queue = []
  const waiting = []
  const deliver = (m) => (waiting.length ? waiting.shift()(m) : queue.push(m))
  socket.on('data', (d) => {
    let ms
    try {
      ms = frames.push(d)
    } catch {
      return
    }
    for (const m of ms) {
      if (m.t === 'out') {
        socket.write(protocol.credit(0, m.data.length))
        m.data = Buffer.from(m.data)
      }
      deliver(m)
    }
  })
  socket.on('error', () => {})
  socket.on('close', () => deliver('closed'))
  const c = {
    socket,
    send: (m) => socket.write(Buffer.isBuffer(m) ? m : protocol.encode(m)),
    next: () => (queue.length ? Promise.resolve(queue.shift()) : new Promise((r) => waiting.push(r))),
    async hello(extra) {
      await new Promise((r, j) => {
        socket.once('connect', r)
        socket.once('error', j)
      })
      c.send(protocol.hello(extra))
      const h = await c.next()
      assert.equal(h.t, 'hello')
      c.greeting = h
      return c
    },
  }
  return c
}

/** The next frame of raw client `c` that `pred` accepts (or `'closed'`). */
export async function nextOf(c, pred) {
  for (;;) {
    const m = await c.next()
    if (m === 'closed' || pred(m)) return m
  }
}

/**
 * Runs `fn` with every ring this Node process maps handed to `watch(ring)` first (which may wrap
 * its methods to count what is read); resolves with what `fn` resolved with.
 */
export async function watchingRings(fn, watch) {
  const { binding } = require('../../lib/native/native.js')
  const open = binding.openSharedOutput
  binding.openSharedOutput = (...args) => {
    const ring = open(...args)
    watch(ring)
    return ring
  }
  try {
    return await fn()
  } finally {
    binding.openSharedOutput = open
  }
}
