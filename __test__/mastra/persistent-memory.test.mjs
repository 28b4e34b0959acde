// The supervisor's memory against clients that ask for more than they read: credit granted and
// never used, log streams left unread, stdin for processes that never read it. Each hostile
// client may cost the supervisor a bounded amount whatever it sends, while a client that reads
// still gets every byte.
import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import * as fs from 'node:fs'
import * as net from 'node:net'
import * as path from 'node:path'
import { once } from 'node:events'
import { createHash, randomBytes } from 'node:crypto'
import { createRequire } from 'node:module'
import { alive, sleep } from './helpers.mjs'
import { sandboxesPerTest } from './persistent-common.mjs'

const require = createRequire(import.meta.url)
const protocol = require('../../lib/persistent/wire/protocol.js')
const { FrameReader } = require('../../lib/persistent/wire/reader.js')
const { attachments, encodeValue } = require('../../lib/persistent/wire/values.js')

const MiB = 1024 * 1024
/** How far the supervisor's RSS may grow over its idle size under one hostile client. */
const BUDGET_MIB = 64

const sandboxes = sandboxesPerTest('memory')

async function started() {
  const { sb } = await sandboxes.start({ env: { PATH: process.env.PATH } })
  // The idle size is that of a supervisor that has served a client that reads (a spawn, an exit,
  // a flood of output), at the most it reached doing so: whether the collector has given that
  // back yet is chance, and what a hostile client adds to it is what that client costs.
  assert.equal((await (await sb.processes.spawn('echo warm')).wait()).stdout, 'warm\n')
  const supervisor = sb.supervisorPid
  const rss = sampler(supervisor)
  const warm = await flood(sb, 128 * MiB)
  assert.equal(await warm.received(), 128 * MiB)
  const served = rss.stop()
  return { sb, socketPath: sb._runtime.connection().socketPath, supervisor, idle: () => Math.max(served, rssOf(supervisor)) }
}

const rssOf = (pid) => Number(/VmRSS:\s+(\d+)/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))[1]) / 1024

/** The supervisor's RSS sampled every 20 ms until `stop()`, which gives the peak (MiB). */
function sampler(pid) {
  let peak = rssOf(pid)
  const timer = setInterval(() => {
    try {
      peak = Math.max(peak, rssOf(pid))
    } catch {}
  }, 20)
  // A test that fails before stop() must not keep Node running.
  timer.unref()
  return {
    stop() {
      clearInterval(timer)
      return Math.max(peak, rssOf(pid))
    },
  }
}

/** A client that greets, then reads nothing: `send` writes frames, `closed` settles when the supervisor ends it. */
async function silent(socketPath) {
  const socket = net.connect(socketPath)
  socket.on('error', () => {})
  await once(socket, 'connect')
  const closed = new Promise((r) => socket.once('close', r))
  socket.write(protocol.encode(protocol.hello()))
  const frames = new FrameReader()
  await new Promise((resolve) => {
    const onData = (d) => {
      if (frames.push(d).length === 0) return
      socket.off('data', onData)
      socket.pause()
      resolve()
    }
    socket.on('data', onData)
  })
  let id = 1
  return {
    socket,
    closed,
    call(op, args) {
      const att = attachments()
      for (const p of protocol.encodeCall(id++, op, encodeValue(args, att), att)) socket.write(p)
    },
  }
}

/** A process of `bytes` bytes of output, all of which the well-behaved client must receive. */
async function flood(sb, bytes) {
  let got = 0
  const h = await sb.processes.spawn(`head -c ${bytes} /dev/zero`, { maxRetainedBytes: 0, onStdout: (d) => (got += d.length) })
  return {
    pid: h.pid,
    async received() {
      assert.equal((await h.wait()).exitCode, 0)
      return got
    },
  }
}

/** `p`, or a rejection once `ms` have passed without it settling. */
function within(p, ms, what) {
  let timer
  const late = new Promise((_, reject) => (timer = setTimeout(() => reject(new Error(`${what}: no answer within ${ms} ms`)), ms)))
  return Promise.race([p, late]).finally(() => clearTimeout(timer))
}

describe('the supervisor memory under a client that does not read', () => {
  it('credit past the window ends that connection with a typed error; the supervisor stays within 64 MiB of idle', async (t) => {
    const { sb, socketPath, supervisor, idle: idleOf } = await started()
    const idle = idleOf()
    const rss = sampler(supervisor)
    const hostile = await silent(socketPath)
    hostile.call('spawn', { command: `head -c ${1024 * MiB} /dev/zero`, env: { PATH: process.env.PATH } })
    const wanted = 256 * MiB
    const good = await flood(sb, wanted)
    // 4 GiB every 10 ms: the supervisor never owes a client more than its window.
    const granting = setInterval(() => hostile.socket.write(protocol.credit(0, 0xffffffff)), 10)
    const received = await good.received()
    const ended = await Promise.race([hostile.closed.then(() => true), sleep(5000).then(() => false)])
    clearInterval(granting)
    const peak = rss.stop()
    hostile.socket.destroy()
    assert.equal(received, wanted, 'the client that reads got every byte')
    t.diagnostic(`supervisor RSS: ${idle.toFixed(0)} MiB idle, ${peak.toFixed(0)} MiB at most`)
    assert.ok(peak - idle < BUDGET_MIB, `the supervisor grew from ${idle.toFixed(0)} to ${peak.toFixed(0)} MiB`)
    assert.equal(ended, true, 'the client that granted past the window was disconnected')
    assert.equal(alive(supervisor), true)
    assert.equal((await (await sb.processes.spawn('echo served')).wait()).stdout, 'served\n')
  })

  it('64 log streams followed and never read cost the supervisor at most 64 MiB over idle', async (t) => {
    const { sb, socketPath, supervisor, idle: idleOf } = await started()
    const idle = idleOf()
    const rss = sampler(supervisor)
    const wanted = 512 * MiB
    const good = await flood(sb, wanted)
    const hostile = await silent(socketPath)
    for (let i = 0; i < 64; i++) hostile.call('logsOpen', { pid: good.pid, options: { follow: true } })
    const received = await good.received()
    // The streams' events after the exit, had the supervisor gone on queuing them.
    await sleep(500)
    const peak = rss.stop()
    hostile.socket.destroy()
    assert.equal(received, wanted, 'the client that reads got every byte')
    t.diagnostic(`supervisor RSS: ${idle.toFixed(0)} MiB idle, ${peak.toFixed(0)} MiB at most`)
    assert.ok(peak - idle < BUDGET_MIB, `the supervisor grew from ${idle.toFixed(0)} to ${peak.toFixed(0)} MiB`)
    assert.equal(alive(supervisor), true)
    assert.equal((await (await sb.processes.spawn('echo served')).wait()).stdout, 'served\n')
  })

  it('384 MiB of stdin calls for processes that never read: the supervisor stays within 64 MiB of idle, pipelined writes arrive whole and in order', async (t) => {
    const { sb, socketPath, supervisor, idle: idleOf } = await started()
    const wd = path.join(sandboxes.dir, 'wd')
    // 12 MiB for each of 32: under what one process's stdin may hold waiting (16 MiB).
    const sleepers = await Promise.all(Array.from({ length: 32 }, () => sb.processes.spawn('sleep 300')))
    const cat = await sb.processes.spawn('cat > piped.bin')
    const idle = idleOf()
    const rss = sampler(supervisor)
    const hostile = await silent(socketPath)
    // One buffer sent 384 times: what this side holds stays 1 MiB.
    const piece = randomBytes(MiB)
    for (let i = 0; i < 384; i++) hostile.call('stdin', { pid: sleepers[i % 32].pid, data: piece })
    // A client that sends its writes without awaiting them and reads nothing either: each is
    // written, in the order sent.
    const pipelined = await silent(socketPath)
    const pieces = Array.from({ length: 32 }, (_, i) => Buffer.alloc(MiB, i))
    for (const data of pieces) pipelined.call('stdin', { pid: cat.pid, data })
    pipelined.call('closeStdin', { pid: cat.pid })
    const wanted = 64 * MiB
    const good = await flood(sb, wanted)
    const received = await good.received()
    assert.equal((await cat.wait()).exitCode, 0)
    await sleep(500)
    const peak = rss.stop()
    const sha = (b) => createHash('sha256').update(b).digest('hex')
    assert.equal(sha(fs.readFileSync(path.join(wd, 'piped.bin'))), sha(Buffer.concat(pieces)), 'the pipelined writes arrived whole and in order')
    assert.equal(received, wanted, 'the client that reads got every byte')
    t.diagnostic(`supervisor RSS: ${idle.toFixed(0)} MiB idle, ${peak.toFixed(0)} MiB at most`)
    assert.ok(peak - idle < BUDGET_MIB, `the supervisor grew from ${idle.toFixed(0)} to ${peak.toFixed(0)} MiB`)
    for (const p of sleepers) assert.equal(await p.kill(), true)
    hostile.socket.destroy()
    pipelined.socket.destroy()
    assert.equal(alive(supervisor), true)
    assert.equal((await (await sb.processes.spawn('echo served')).wait()).stdout, 'served\n')
  })

  it('writes waiting for processes that never read their stdin hold back only further writes: kills and other calls on the connection go on', async () => {
    const { sb, supervisor } = await started()
    const sleepers = await Promise.all(Array.from({ length: 12 }, () => sb.processes.spawn('sleep 300')))
    // 12 processes sent 2 MiB each, not awaited: more than the input the supervisor holds for one client.
    const writes = sleepers.map((p) => p.sendStdin(Buffer.alloc(2 * MiB, 'x')).then(() => 'written', (e) => e.code))
    await sleep(500)
    const listed = await within(sb.processes.list(), 5000, 'list')
    assert.equal(listed.filter((p) => p.running).length, 12)
    const echo = await within(sb.processes.spawn('echo served'), 5000, 'spawn')
    assert.equal((await within(echo.wait(), 5000, 'wait')).stdout, 'served\n')
    for (const p of sleepers) assert.equal(await within(p.kill(), 5000, 'kill'), true)
    // Each write ends with its process: none of them was written, none is left waiting.
    const ends = await within(Promise.all(writes), 5000, 'the writes')
    assert.ok(ends.every((e) => typeof e === 'string' && e !== 'written'), JSON.stringify(ends))
    assert.equal(alive(supervisor), true)
  })

  it('sendStdin of 1 MiB 384 times, not awaited, for a process that never reads: refused past 16 MiB as a local process is, nothing more held', async () => {
    const { sb, supervisor, idle: idleOf } = await started()
    const sleeper = await sb.processes.spawn('sleep 300')
    const idle = idleOf()
    const rss = sampler(supervisor)
    const piece = randomBytes(MiB)
    const ends = Array(384).fill('waiting')
    const writes = ends.map((_, i) => sleeper.sendStdin(piece).then(() => (ends[i] = 'written'), (e) => (ends[i] = e.code)))
    await sleep(1000)
    const count = (what) => ends.filter((e) => e === what).length
    try {
      assert.deepEqual({ waiting: count('waiting'), refused: count('PROCESS_STDIN_BACKLOG_FULL') }, { waiting: 16, refused: 368 })
    } finally {
      assert.equal(await sleeper.kill(), true)
    }
    await within(Promise.all(writes), 5000, 'the writes')
    assert.equal(count('written'), 0)
    assert.ok(rss.stop() - idle < BUDGET_MIB)
    assert.equal(alive(supervisor), true)
  })
})
