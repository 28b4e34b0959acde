// The local web view in a real headless Chromium: createWebView over an app's own managers and
// sandboxes, and `procvisor web` over a persistent sandbox that another Node process started.
import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import * as fs from 'node:fs'
import * as path from 'node:path'
import { createRequire } from 'node:module'
import { BIN } from './persistent-common.mjs'
import { privateSockets, startedElsewhere } from './backends.mjs'
import { browserSession, recordingPage, dropConnection, screenLines, screenShows } from './web-browser.mjs'

const require = createRequire(import.meta.url)
const { ProcessManager, createWebView } = require('../../index.js')
const { NativeLocalSandbox } = require('../../mastra/index.js')
const WebSocket = require('ws')
const { httpGet } = require('../helpers.js')

privateSockets()
const aside = startedElsewhere('procvisor-web-aside-')

const SHELL = { command: ['/bin/bash', '--norc', '--noprofile', '-i'], env: { PS1: '$ ', HISTFILE: '/dev/null' } }
const session = browserSession('web')
const cleanups = session.cleanups

/** A manager, its web view and a page, all closed after the tests. */
async function managerView(options = {}) {
  const manager = new ProcessManager({ workingDirectory: session.dir })
  const view = await createWebView({ managers: [manager], ...options })
  cleanups.push(() => view.close(), () => manager.close())
  return { manager, view, origin: new URL(view.url).origin }
}

/** GET `path` of the view with raw headers; resolves with the status and body. */
const get = (view, pathname, headers = {}) => httpGet(view.url, pathname, headers)

/** Opens a WebSocket to the view; resolves with 'open' or the HTTP status it was refused with. */
function tryWebSocket(url, options) {
  return new Promise((resolve) => {
    const ws = new WebSocket(url, options)
    ws.on('open', () => {
      ws.terminate()
      resolve('open')
    })
    ws.on('unexpected-response', (_req, res) => resolve(res.statusCode))
    ws.on('error', (e) => resolve(e.message))
  })
}

describe('the web view', () => {
  it('lists processes with their state and shows a log live, resuming after a dropped connection without gap or repeat', async () => {
    const { manager, view } = await managerView()
    const sandbox = new NativeLocalSandbox({ workingDirectory: path.join(session.dir, 'sb') })
    await sandbox.start()
    cleanups.push(() => sandbox.destroy())
    const mastra = await sandbox.processes.spawn('echo from the sandbox; sleep 30')
    const other = await createWebView({ managers: [manager], sandboxes: [sandbox] })
    cleanups.push(() => other.close())
    const tricky = '<img src=x onerror=alert(1)>'
    await manager.spawn(`echo '${tricky}'`).then((h) => h.wait())
    const p = await manager.spawn('echo first; while read line; do echo "got $line"; done')

    const page = await recordingPage(session.browser)
    await page.goto(other.url)
    assert.equal(new URL(page.url()).search, '', 'the token leaves the URL for the cookie')
    const rows = await page.locator('tr').allInnerTexts()
    assert.ok(rows.some((r) => r.includes(String(p.pid)) && r.includes('running')), rows.join('\n'))
    assert.ok(rows.some((r) => r.includes(tricky) && r.includes('exited 0')), 'a command is shown as text, escaped')
    assert.equal(await page.locator('img').count(), 0, 'and never as HTML')
    assert.ok(rows.some((r) => r.includes(String(mastra.pid)) && r.includes('sleep 30')), "the sandbox's processes too")

    await page.click('a:text("while read line")')
    await page.waitForFunction(() => document.getElementById('log').textContent === 'first\n')
    assert.equal(await page.locator('#state').innerText(), 'running')
    await p.sendStdin('one\n')
    await page.waitForFunction(() => document.getElementById('log').textContent.endsWith('got one\n'))
    // A dropped connection: the page reconnects with the last cursor it was sent.
    await dropConnection(page)
    await p.sendStdin('two\n')
    await page.waitForFunction(() => document.getElementById('log').textContent.endsWith('got two\n'))
    await p.closeStdin()
    await page.waitForFunction(() => document.getElementById('state').textContent === 'exited 0')
    assert.equal(await page.locator('#log').textContent(), 'first\ngot one\ngot two\n', 'no gap, no repeat')

    await page.goto(new URL('/', other.url).href)
    await page.click(`a:text("${'echo from the sandbox'}")`)
    await page.waitForFunction(() => document.getElementById('log').textContent === 'from the sandbox\n')
    await page.close()
  })

  it('a terminal runs commands, follows the page size, reconnects by itself, and a reload restores the screen', async () => {
    const { manager, view } = await managerView()
    const t = await manager.createTerminal({ ...SHELL, cols: 80, rows: 24 })
    const page = await recordingPage(session.browser, { width: 900, height: 500 })
    await page.goto(view.url)
    await page.click(`a:text-is("${t.id}")`)
    await screenShows(page, /^\$$/)
    await page.keyboard.type('echo $((6*7))\n')
    await screenShows(page, /^42$/)

    const size = () => page.evaluate(() => `${window.procvisorTerminal.rows} ${window.procvisorTerminal.cols}`)
    const first = await size()
    await page.keyboard.type('stty size\n')
    await screenShows(page, new RegExp(`^${first}$`))

    // A dropped connection: the page reconnects by itself and goes on after the last cursor.
    await dropConnection(page)
    await page.keyboard.type('echo after the drop\n')
    await screenShows(page, /^after the drop$/)
    const lines = await screenLines(page)
    assert.equal(lines.filter((l) => l === '42').length, 1, `no output repeated after the reconnect:\n${lines.join('\n')}`)

    await page.setViewportSize({ width: 700, height: 350 })
    await page.waitForFunction((s) => `${window.procvisorTerminal.rows} ${window.procvisorTerminal.cols}` !== s, first)
    const second = await size()
    assert.notEqual(second, first)
    await page.keyboard.type('clear; echo resized; stty size\n')
    await screenShows(page, new RegExp(`^${second}$`))

    await page.reload()
    const restored = await screenShows(page, new RegExp(`^${second}$`))
    assert.ok(restored.includes('resized'), restored.join('\n'))
    await page.close()
  })

  it('a paste larger than the largest frame reaches the program whole, a character cut nowhere', async () => {
    const { manager, view } = await managerView()
    // 3 MiB and more, with a 4-byte character across the first 64 Ki UTF-16 units.
    const text = 'a'.repeat(65535) + '\u{1F600}' + 'bcdefghijk\u00e9\u{1F600}'.repeat(200_000)
    const size = Buffer.byteLength(text)
    assert.ok(size > 3 << 20)
    const file = path.join(session.dir, 'pasted')
    const t = await manager.createTerminal({ command: ['/bin/sh', '-c', `stty raw -echo; printf 'ready\\r\\n'; head -c ${size} > pasted; printf 'done\\r\\n'`] })
    const page = await recordingPage(session.browser)
    await page.goto(view.url)
    await page.click(`a:text-is("${t.id}")`)
    await screenShows(page, /^ready$/)
    await page.evaluate((s) => window.procvisorTerminal.paste(s), text)
    await screenShows(page, /^done$/)
    assert.equal(fs.statSync(file).size, size)
    assert.ok(fs.readFileSync(file, 'utf8') === text, 'the same text, in order')
    assert.equal(await page.evaluate(() => window.__sockets.length), 1, 'on the one connection')
    await page.close()
  })

  it('refuses a request without the token, a foreign Host, and a WebSocket from a foreign Origin', async () => {
    const { manager, view, origin } = await managerView()
    const t = await manager.createTerminal(SHELL)
    const host = new URL(view.url).host
    const token = new URL(view.url).searchParams.get('token')
    assert.match(token, /^[A-Za-z0-9_-]{43}$/)

    assert.equal((await get(view, '/')).status, 403)
    assert.equal((await get(view, '/?token=wrong')).status, 403)
    assert.equal((await get(view, `/p/manager-1/${t.id}`)).status, 403)
    const first = await get(view, `/?token=${token}`)
    assert.equal(first.status, 303)
    const cookie = first.headers['set-cookie'][0]
    assert.match(cookie, /HttpOnly/)
    assert.match(cookie, /SameSite=Strict/)
    const jar = cookie.split(';')[0]
    assert.equal((await get(view, '/', { cookie: jar })).status, 200)
    assert.equal((await get(view, '/', { cookie: jar, host: `evil.example:${new URL(view.url).port}` })).status, 403, 'DNS rebinding')
    assert.equal((await get(view, `/?token=${token}`, { host: 'evil.example' })).status, 403)
    assert.equal((await get(view, '/', { cookie: jar, host: `localhost:${new URL(view.url).port}` })).status, 200)

    const ws = `ws://${host}/ws/terminal/manager-1/${t.id}`
    assert.equal(await tryWebSocket(ws, { origin, headers: { cookie: jar } }), 'open')
    assert.equal(await tryWebSocket(ws, { origin }), 403, 'no token')
    assert.equal(await tryWebSocket(ws, { origin: 'http://evil.example', headers: { cookie: jar } }), 403, 'a foreign Origin')
    assert.equal(await tryWebSocket(`${ws}?token=${token}`, { origin: 'http://evil.example' }), 403)
    assert.equal(await tryWebSocket(ws, { headers: { cookie: jar } }), 403, 'no Origin')

    // The same from a page of another site open in the browser.
    const page = await session.browser.newPage()
    await page.goto(`data:text/html,<p>elsewhere</p>`)
    const opened = await page.evaluate(
      (url) =>
        new Promise((resolve) => {
          const s = new WebSocket(url)
          s.onopen = () => resolve('open')
          s.onerror = () => resolve('refused')
        }),
      `${ws}?token=${token}`,
    )
    assert.equal(opened, 'refused')
    await page.close()
  })

  it('procvisor web prints its URL first and shows the processes and terminals of a persistent sandbox started elsewhere', async () => {
    const s = await aside.startIn(
      undefined,
      `const p = await sb.processes.spawn('echo hello from elsewhere; sleep 60')
const sh = await sb.processes.spawn('bash --norc --noprofile -i', { pty: true, env: { PS1: '$ ', HISTFILE: '/dev/null' } })
const t = await sb.terminals.create({ command: ['sh', '-i'], env: { PS1: '% ' } })
console.log(JSON.stringify({ pid: p.pid, sh: sh.pid, terminal: t.id }))`,
    )
    const id = s.id

    const web = spawn(process.execPath, [BIN, 'web'], { stdio: ['ignore', 'pipe', 'pipe'] })
    cleanups.push(() => web.kill('SIGKILL'))
    const url = await new Promise((resolve, reject) => {
      let out = ''
      web.stdout.on('data', (d) => {
        out += d
        if (out.includes('\n')) resolve(out.split('\n')[0])
      })
      web.once('close', (code) => reject(new Error(`procvisor web exited (${code}) before printing its URL`)))
    })
    assert.match(url, /^http:\/\/127\.0\.0\.1:\d+\/\?token=[A-Za-z0-9_-]{43}$/)

    const page = await recordingPage(session.browser)
    await page.goto(url)
    const section = page.locator(`section[data-key="${id}"]`)
    assert.match(await section.innerText(), /hello from elsewhere; sleep 60/)
    await section.locator('a:text("hello from elsewhere")').click()
    await page.waitForFunction(() => document.getElementById('log').textContent === 'hello from elsewhere\n')

    await page.goto(new URL(`/t/${id}/${s.sh}`, url).href)
    await screenShows(page, /^\$$/)
    await page.keyboard.type('echo $((6*7))\n')
    await screenShows(page, /^42$/)

    // A terminal of the sandbox, listed by its id and driven the same way.
    await page.goto(url)
    assert.match(await page.locator(`section[data-key="${id}"]`).innerText(), new RegExp(s.terminal))
    await page.goto(new URL(`/t/${id}/${s.terminal}`, url).href)
    await screenShows(page, /^%/)
    await page.keyboard.type('echo $((7*6))x\n')
    await screenShows(page, /^42x$/)
    await page.close()

    web.kill('SIGINT')
    const code = await new Promise((r) => web.once('close', r))
    assert.equal(code, 0, 'Ctrl-C ends it cleanly')
  })
})
