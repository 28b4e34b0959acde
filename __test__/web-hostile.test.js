'use strict'
// The web view against clients that misbehave on its WebSockets: malformed frames, frames too
// large, input typed faster than the program reads it. The view runs in a Node process of its
// own (the host), which must live on, serve the next client, and keep its memory bounded.
const test = require('node:test')
const assert = require('node:assert/strict')
const crypto = require('node:crypto')
const net = require('node:net')
const path = require('node:path')
const { spawn } = require('node:child_process')
const { WebSocket } = require('ws')
const { alive, eventually } = require('./helpers')

const ROOT = path.join(__dirname, '..')

/** The host: a ProcessManager with a shell terminal, a terminal that reads nothing, a process, and its web view. */
const HOST = `
const { ProcessManager, createWebView } = require(${JSON.stringify(ROOT)})
;(async () => {
  const pm = new ProcessManager()
  const shell = await pm.createTerminal({ command: ['/bin/sh'], env: { PS1: '$ ' } })
  const deaf = await pm.createTerminal({ command: ['sleep', '1000'] })
  const echo = await pm.spawn('echo ready; while read l; do echo "got $l"; done')
  const view = await createWebView({ managers: [pm] })
  const answer = (v) => process.stdout.write(JSON.stringify(v) + '\\n')
  require('node:readline').createInterface({ input: process.stdin }).on('line', async (line) => {
    if (line === 'rss') {
      if (global.gc) global.gc()
      answer({ rss: process.memoryUsage().rss })
    } else if (line === 'exit') {
      await Promise.race([Promise.all([view.close(), pm.close()]), new Promise((r) => setTimeout(r, 3000))])
      process.exit(0)
    }
  })
  answer({ url: view.url, shell: shell.id, deaf: deaf.id, echo: echo.id, pids: [shell.pid, deaf.pid, echo.pid] })
})()
`

/** Starts the host; `ask(line)` resolves with its next answer, or rejects once it has exited. */
function startHost() {
  const proc = spawn(process.execPath, ['--expose-gc', '-e', HOST], { stdio: ['pipe', 'pipe', 'pipe'] })
  let out = ''
  let err = ''
  const waiting = []
  proc.stderr.on('data', (d) => (err += d))
  // A host that died is said by its exit, not by the write to it.
  proc.stdin.on('error', () => {})
  proc.stdout.on('data', (d) => {
    out += d
    for (let nl = out.indexOf('\n'); nl >= 0; nl = out.indexOf('\n')) {
      const line = out.slice(0, nl)
      out = out.slice(nl + 1)
      waiting.shift()?.resolve(JSON.parse(line))
    }
  })
  const exited = new Promise((r) => proc.once('exit', (code, signal) => r({ code, signal })))
  exited.then(({ code, signal }) => {
    for (const w of waiting.splice(0)) w.reject(new Error(`the host exited (code ${code}, signal ${signal}): ${err.trim().split('\n').slice(-12).join(' | ')}`))
  })
  const next = () => new Promise((resolve, reject) => (proc.exitCode !== null || proc.signalCode !== null ? reject(new Error(`the host exited: ${err}`)) : waiting.push({ resolve, reject })))
  const host = {
    proc,
    exited,
    next,
    ask(line) {
      const answer = next()
      proc.stdin.write(`${line}\n`)
      return answer
    },
    async stop() {
      if (proc.exitCode === null && proc.signalCode === null) {
        proc.stdin.write('exit\n')
        const done = await Promise.race([exited, new Promise((r) => setTimeout(() => r(null), 5000))])
        if (!done) proc.kill('SIGKILL')
      }
      for (const pid of host.info?.pids ?? []) if (alive(pid)) process.kill(pid, 'SIGKILL')
    },
  }
  return host
}

async function hostWithView() {
  const host = startHost()
  host.info = await host.next()
  const u = new URL(host.info.url)
  host.port = Number(u.port)
  host.token = u.searchParams.get('token')
  host.origin = u.origin
  return host
}

/** A WebSocket frame; client frames are masked unless `mask` is false; `length` may claim more than is sent. */
function frame(opcode, payload, { mask = true, length = payload.length } = {}) {
  let head
  if (length < 126) head = Buffer.from([0x80 | opcode, length])
  else if (length < 65536) {
    head = Buffer.from([0x80 | opcode, 126, 0, 0])
    head.writeUInt16BE(length, 2)
  } else {
    head = Buffer.from([0x80 | opcode, 127, 0, 0, 0, 0, 0, 0, 0, 0])
    head.writeBigUInt64BE(BigInt(length), 2)
  }
  if (!mask) return Buffer.concat([head, payload])
  head[1] |= 0x80
  const key = crypto.randomBytes(4)
  const body = Buffer.from(payload)
  for (let i = 0; i < body.length; i++) body[i] ^= key[i & 3]
  return Buffer.concat([head, key, body])
}

/**
 * A raw TCP client that upgrades `pathname` with the token and the view's own Origin, then writes
 * `bytes`; resolves with the close code the server sent (null when it sent none) once the
 * connection is closed.
 */
function rawSocket(host, pathname, bytes) {
  return new Promise((resolve, reject) => {
    const socket = net.connect(host.port, '127.0.0.1')
    let buffer = Buffer.alloc(0)
    let upgraded = false
    let code = null
    socket.on('error', () => {})
    socket.on('close', () => (upgraded ? resolve(code) : reject(new Error(`no upgrade: ${buffer.toString().split('\r\n')[0]}`))))
    socket.on('connect', () => {
      const key = crypto.randomBytes(16).toString('base64')
      socket.write(
        `GET ${pathname}?token=${host.token} HTTP/1.1\r\nHost: 127.0.0.1:${host.port}\r\nOrigin: ${host.origin}\r\n` +
          `Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: ${key}\r\nSec-WebSocket-Version: 13\r\n\r\n`,
      )
    })
    socket.on('data', (d) => {
      buffer = Buffer.concat([buffer, d])
      if (!upgraded) {
        const end = buffer.indexOf('\r\n\r\n')
        if (end < 0) return
        if (!buffer.subarray(0, end).toString().startsWith('HTTP/1.1 101')) return socket.destroy()
        upgraded = true
        buffer = buffer.subarray(end + 4)
        socket.write(bytes)
        // The server's close frame ends it; a server that ends nothing is ended here.
        setTimeout(() => socket.destroy(), 5000).unref()
      }
      // Frames from the server: output, control, and at last the close with its code.
      while (buffer.length >= 2) {
        const len7 = buffer[1] & 0x7f
        const at = len7 === 126 ? 4 : len7 === 127 ? 10 : 2
        if (buffer.length < at) return
        const len = len7 === 126 ? buffer.readUInt16BE(2) : len7 === 127 ? Number(buffer.readBigUInt64BE(2)) : len7
        if (buffer.length < at + len) return
        if ((buffer[0] & 0x0f) === 8 && len >= 2) {
          code = buffer.readUInt16BE(at)
          socket.end()
        }
        buffer = buffer.subarray(at + len)
      }
    })
  })
}

/** A well-behaved client of the view; `output` gathers its binary frames, `text` its text frames. */
function client(host, pathname) {
  const ws = new WebSocket(`ws://127.0.0.1:${host.port}${pathname}?token=${host.token}`, { origin: host.origin })
  const c = { ws, output: '', text: '' }
  ws.on('message', (data, isBinary) => (isBinary ? (c.output += data.toString()) : (c.text += data.toString())))
  ws.on('error', () => {})
  c.open = new Promise((resolve, reject) => {
    ws.once('open', resolve)
    ws.once('error', reject)
  })
  return c
}

const MALFORMED = [
  ['a 2 MiB paste', frame(1, Buffer.alloc(2 << 20, 'a')), 1009],
  ['a frame that says it holds 100 MB', frame(2, Buffer.alloc(64 * 1024), { length: 100e6 }), 1009],
  ['text that is not UTF-8', frame(1, Buffer.from([0x68, 0xff, 0xfe, 0xfd])), 1007],
  ['an unmasked frame', frame(2, Buffer.from('ls\r'), { mask: false }), 1002],
  ['opcode 3', frame(3, Buffer.from('x')), 1002],
]

test('malformed frames on the terminal and log sockets close that socket only; the host serves the next client', async () => {
  const host = await hostWithView()
  try {
    for (const [kind, ref] of [['terminal', host.info.shell], ['logs', host.info.echo]]) {
      for (const [name, bytes, code] of MALFORMED) {
        const closed = await rawSocket(host, `/ws/${kind}/manager-1/${ref}`, bytes)
        assert.ok((await host.ask('rss')).rss > 0, `the host answers after ${name} on the ${kind} socket`)
        assert.equal(closed, code, `${name} on the ${kind} socket: close code`)
      }
    }
    const t = client(host, `/ws/terminal/manager-1/${host.info.shell}`)
    await t.open
    t.ws.send('echo $((6*7))\r')
    assert.ok(await eventually(() => /^42\r?$/m.test(t.output), 5000), t.output)
    t.ws.close()
    const log = client(host, `/ws/logs/manager-1/${host.info.echo}`)
    await log.open
    assert.ok(await eventually(() => log.text.includes(Buffer.from('ready\n').toString('base64')), 5000), log.text)
    log.ws.close()
    assert.equal(host.proc.exitCode, null)
  } finally {
    await host.stop()
  }
})

test('input typed at a terminal that reads nothing waits in the client, not in the host', async (context) => {
  const host = await hostWithView()
  try {
    const t = client(host, `/ws/terminal/manager-1/${host.info.deaf}`)
    await t.open
    const idle = (await host.ask('rss')).rss
    const piece = Buffer.alloc(512 * 1024, 'y')
    const total = 160 << 20
    for (let sent = 0; sent < total; sent += piece.length) t.ws.send(piece)
    // Until the host stops taking more: all of it, or what a paused socket lets through.
    let last = -1
    await eventually(async () => {
      await new Promise((r) => setTimeout(r, 500))
      const now = t.ws.bufferedAmount
      const still = now === last
      last = now
      return still
    }, 30_000)
    const grown = (await host.ask('rss')).rss - idle
    const waiting = t.ws.bufferedAmount
    t.ws.terminate()
    context.diagnostic(`host grew ${(grown / 1048576).toFixed(1)} MiB; ${(waiting / 1048576).toFixed(1)} MiB held in the client`)
    assert.ok(grown < 64 << 20, `the host grew by ${(grown / 1048576).toFixed(1)} MiB for ${total >> 20} MiB typed (${(waiting / 1048576).toFixed(1)} MiB still in the client)`)
    assert.ok((await host.ask('rss')).rss > 0, 'the host goes on')
  } finally {
    await host.stop()
  }
})
