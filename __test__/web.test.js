'use strict'
// Terminal#connect without a browser: the attach addon's protocol over a real `ws` socket, and
// over a plain object shaped like one (it needs no `ws`).
const test = require('node:test')
const assert = require('node:assert/strict')
const { EventEmitter } = require('node:events')
const { WebSocketServer } = require('ws')
const { ProcessManager, InvalidProcessCursorError, InvalidProcessOptionError, createWebView } = require('..')
const { eventually, terminalClient } = require('./helpers')

const SHELL = { command: ['/bin/sh'], env: { PS1: '$ ' }, cols: 80, rows: 24 }

/** A ws server that connects each socket to `terminal`; resolves with its port and what connect() settled with. */
async function serve(terminal, options) {
  const wss = new WebSocketServer({ port: 0, host: '127.0.0.1' })
  await new Promise((r) => wss.once('listening', r))
  const settled = []
  wss.on('connection', (ws, req) => {
    const since = new URL(req.url, 'http://x').searchParams.get('since') || undefined
    terminal.connect(ws, { ...options, since }).then(
      () => settled.push('resolved'),
      (e) => settled.push(e),
    )
  })
  return { wss, port: wss.address().port, settled }
}

const client = terminalClient

test('Terminal#connect: output as binary frames, typed text, the resize message, and since resumes with no repeat', async () => {
  const pm = new ProcessManager()
  const t = await pm.createTerminal(SHELL)
  const { wss, port } = await serve(t, { cursors: true })
  try {
    const a = client(port)
    await a.open
    a.ws.send('echo $((6*7)); stty size\r')
    assert.ok(await eventually(() => /^42\r?$/m.test(a.output) && /^24 80\r?$/m.test(a.output), 5000), a.output)
    a.ws.send('\u0000' + JSON.stringify({ cols: 100, rows: 30 }))
    a.ws.send(Buffer.from('stty size\r'))
    assert.ok(await eventually(() => /^30 100\r?$/m.test(a.output), 5000), a.output)
    assert.ok(a.controls.length > 0 && a.controls.every((m) => typeof m.cursor === 'string'))
    const cursor = a.controls.at(-1).cursor
    a.ws.close()

    const b = client(port, `?since=${encodeURIComponent(cursor)}`)
    await b.open
    b.ws.send('echo resumed\r')
    assert.ok(await eventually(() => /^resumed\r?$/m.test(b.output), 5000), b.output)
    assert.doesNotMatch(b.output, /42|30 100/, 'nothing from before the cursor')

    b.ws.send('exit\r')
    assert.equal(await eventually(() => b.closed, 5000), 1000, 'closed when the program ends')
    assert.ok(b.controls.some((m) => m.exit && m.exit.code === 0))

    const bad = client(port, '?since=pvc1.bogus')
    assert.equal(await eventually(() => bad.closed, 5000), 1008)
  } finally {
    wss.close()
    await pm.close()
  }
})

test('Terminal#connect takes any ws-like object, waits while it holds too much, and rejects a bad cursor', async () => {
  const pm = new ProcessManager()
  const t = await pm.createTerminal({ command: ['/bin/sh', '-c', 'i=0; while [ $i -lt 2000 ]; do echo line $i; i=$((i+1)); done; sleep 30'] })
  try {
    const sent = []
    const fake = Object.assign(new EventEmitter(), {
      bufferedAmount: 10 * 1024 * 1024,
      readyState: 1,
      send: (d) => sent.push(d),
      close() {
        this.emit('close')
      },
    })
    const done = t.connect(fake)
    await t.waitForLog('line 1999')
    await new Promise((r) => setTimeout(r, 100))
    assert.equal(sent.length, 0, 'nothing is read while the socket holds more than 256 KiB')
    fake.bufferedAmount = 0
    assert.ok(await eventually(() => sent.some((d) => Buffer.from(d).toString().includes('line 1999')), 5000))
    fake.close()
    await done

    await assert.rejects(t.connect({}), InvalidProcessOptionError)
    const closes = []
    const other = Object.assign(new EventEmitter(), { bufferedAmount: 0, send() {}, close: (code) => closes.push(code) })
    await assert.rejects(t.connect(other, { since: 'pvc1.bogus' }), InvalidProcessCursorError)
    assert.deepEqual(closes, [1008])
  } finally {
    await pm.close()
  }
})

test('createWebView refuses bad options with InvalidProcessOptionError', async () => {
  for (const o of [{ port: -1 }, { port: 1.5 }, { host: 3 }, { managers: {} }, { managers: [{}] }, { sandboxes: [null] }, 'x']) {
    await assert.rejects(createWebView(o), InvalidProcessOptionError, JSON.stringify(o))
  }
})

test("the web view's log socket reads no further while the browser is behind, and goes on without a gap", async () => {
  const { serveLog } = require('../lib/web/log-socket')
  const pm = new ProcessManager()
  try {
    const p = await pm.spawn('i=0; while [ $i -lt 3000 ]; do echo "line $i"; i=$((i+1)); done')
    await p.wait()
    const frames = []
    const ws = Object.assign(new EventEmitter(), {
      bufferedAmount: 10 * 1024 * 1024,
      readyState: 1,
      send: (d) => frames.push(JSON.parse(d)),
      close() {
        this.readyState = 3
        this.emit('close')
      },
    })
    const served = serveLog(p, ws, {})
    await new Promise((r) => setTimeout(r, 100))
    assert.equal(frames.length, 0, 'nothing read while the socket holds more than 256 KiB')
    ws.bufferedAmount = 0
    await served
    const text = frames.filter((f) => f.type === 'stdout').map((f) => Buffer.from(f.data, 'base64').toString()).join('')
    assert.equal(text, Array.from({ length: 3000 }, (_, i) => `line ${i}\n`).join(''))
    assert.equal(frames.at(-1).type, 'exit')
    assert.equal(ws.readyState, 3, 'closed after the exit')
  } finally {
    await pm.close()
  }
})

test('the web view refuses a plain request that another page made: a foreign Origin, or Sec-Fetch-Site cross-site or same-site', async () => {
  const http = require('node:http')
  const pm = new ProcessManager()
  const view = await createWebView({ managers: [pm] })
  const u = new URL(view.url)
  const get = (pathname, headers) =>
    new Promise((resolve, reject) => {
      const req = http.request({ host: u.hostname, port: u.port, path: pathname, headers }, (res) => {
        res.resume()
        res.on('end', () => resolve(res.statusCode))
      })
      req.on('error', reject)
      req.end()
    })
  try {
    const token = u.searchParams.get('token')
    const jar = { cookie: `procvisor_web_${u.port}=${token}` }
    assert.equal(await get(`/?token=${token}`, { origin: 'http://evil.example' }), 403, 'the token from a foreign Origin')
    assert.equal(await get('/', { ...jar, origin: 'http://evil.example' }), 403, 'the cookie from a foreign Origin')
    assert.equal(await get('/', { ...jar, origin: 'null' }), 403, 'an opaque Origin')
    assert.equal(await get('/', { ...jar, 'sec-fetch-site': 'cross-site' }), 403)
    assert.equal(await get('/', { ...jar, 'sec-fetch-site': 'same-site' }), 403, 'a page of another port of this host')
    assert.equal(await get(`/?token=${token}`, { 'sec-fetch-site': 'cross-site' }), 403)
    assert.equal(await get('/assets/style.css', { ...jar, 'sec-fetch-site': 'cross-site' }), 403)
    // Its own pages, and the URL opened by hand.
    assert.equal(await get(`/?token=${token}`, { 'sec-fetch-site': 'none' }), 303)
    assert.equal(await get('/', { ...jar, 'sec-fetch-site': 'same-origin', origin: u.origin }), 200)
    assert.equal(await get('/assets/style.css', { ...jar, 'sec-fetch-site': 'same-origin' }), 200)
    assert.equal(await get('/', jar), 200, 'a client that sends neither')
  } finally {
    await view.close()
    await pm.close()
  }
})
