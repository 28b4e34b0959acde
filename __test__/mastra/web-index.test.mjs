// The web view's index in a real headless Chromium: rows kept live over one WebSocket, the
// measures (CPU%, memory) of real processes, and the Kill and Restart buttons with their checks.
import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import * as http from 'node:http'
import { createRequire } from 'node:module'
import * as path from 'node:path'
import { startElsewhere, freshId, sweep } from './persistent-common.mjs'
import { privateSockets } from './backends.mjs'
import { browserSession, recordingPage } from './web-browser.mjs'

const require = createRequire(import.meta.url)
const { ProcessManager, createWebView } = require('../../index.js')
const { startServer } = require('../../lib/web/server.js')
const { persistentCatalog } = require('../../lib/cli/web.js')
const { appCatalog } = require('../../lib/web/sources.js')
const WebSocket = require('ws')

privateSockets()

const session = browserSession('web-index')
const cleanups = session.cleanups

async function managerView() {
  const manager = new ProcessManager({ workingDirectory: session.dir })
  const view = await createWebView({ managers: [manager] })
  cleanups.push(() => view.close(), () => manager.close())
  return { manager, view }
}

/** The index open in Chromium, its state socket connected. */
async function openIndex(view) {
  const page = await recordingPage(session.browser, { width: 1200, height: 600 })
  cleanups.push(() => page.close())
  await page.goto(view.url)
  await page.waitForFunction(() => document.body.dataset.connected === 'true')
  return page
}

/** The text of cell `cls` of the row of process `ref`. */
const cellText = (page, ref, cls) => page.evaluate(([r, c]) => document.querySelector(`tr[data-ref="${r}"] td.${c}`)?.textContent.trim() ?? null, [ref, cls])

/** A row's cell, waited for until `test` holds of its text; the text. */
async function cellBecomes(page, ref, cls, test, timeout = 10_000) {
  const end = Date.now() + timeout
  let text
  while (Date.now() < end) {
    text = await cellText(page, ref, cls)
    if (text !== null && test(text)) return text
    await new Promise((r) => setTimeout(r, 25))
  }
  throw new Error(`cell ${cls} of ${ref} stayed ${JSON.stringify(text)}`)
}

function bytesOf(text) {
  const m = /^([\d.]+) (B|KiB|MiB|GiB)$/.exec(text)
  return m ? Number(m[1]) * 1024 ** ['B', 'KiB', 'MiB', 'GiB'].indexOf(m[2]) : NaN
}

/** A POST to the view with raw headers; resolves with the status. */
function post(view, pathname, headers, body = '{}') {
  const u = new URL(view.url)
  return new Promise((resolve, reject) => {
    const req = http.request({ host: u.hostname, port: u.port, path: pathname, method: 'POST', headers: { 'content-type': 'application/json', ...headers } }, (res) => {
      res.resume()
      res.on('end', () => resolve(res.statusCode))
    })
    req.on('error', reject)
    req.end(body)
  })
}

describe('the index of the web view', () => {
  it('shows a process killed from outside as exited within 1 s, and a restarting service its count and pid, without a reload', async () => {
    const { manager, view } = await managerView()
    const victim = await manager.exec(['sleep', '300'])
    const service = await manager.exec(['sleep', '1'], { restart: { policy: 'always', backoffMs: { initial: 100, max: 100 } } })
    const page = await openIndex(view)
    await page.evaluate(() => (window.__loads = (window.__loads ?? 0) + 1))
    await cellBecomes(page, victim.id, 'state', (t) => t === 'running')
    const firstPid = await cellText(page, service.id, 'pid')

    await victim.kill('SIGKILL')
    const killedAt = Date.now()
    await cellBecomes(page, victim.id, 'state', (t) => t.startsWith('exited'), 1000)
    assert.ok(Date.now() - killedAt <= 1000, `shown after ${Date.now() - killedAt} ms`)

    const restarts = await cellBecomes(page, service.id, 'restarts', (t) => Number(t) >= 2)
    const pid = await cellText(page, service.id, 'pid')
    assert.notEqual(pid, firstPid, 'the pid of the current run')
    assert.ok(Number(restarts) >= 2)

    // A process started after the page opened appears in its group.
    const late = await manager.exec(['sleep', '301'])
    await cellBecomes(page, late.id, 'state', (t) => t === 'running')
    assert.equal(await cellText(page, late.id, 'command'), 'sleep 301')
    assert.equal(await page.evaluate(() => window.__loads), 1, 'the same page, never reloaded')
  })

  it("shows a CPU-bound process near 100% CPU and a growing allocation's memory growing, with sparklines", async () => {
    const { manager, view } = await managerView()
    const busy = await manager.exec(['node', '-e', 'for(;;){}'])
    const growing = await manager.exec(['node', '-e', 'const a=[];setInterval(()=>a.push(Buffer.alloc(16<<20,1)),250)'])
    const page = await openIndex(view)
    const cpu = await cellBecomes(page, busy.id, 'cpu', (t) => parseFloat(t) > 50)
    assert.match(cpu, /^\d+%$/)
    const early = bytesOf(await cellBecomes(page, growing.id, 'mem', (t) => bytesOf(t) > 0))
    const later = await cellBecomes(page, growing.id, 'mem', (t) => bytesOf(t) > early + 64 * 1024 * 1024)
    assert.match(later, /^[\d.]+ (MiB|GiB)$/)
    await page.waitForFunction((id) => document.querySelector(`tr[data-ref="${id}"] td.cpu svg.spark polyline`)?.getAttribute('points').split(' ').length >= 2, busy.id, { timeout: 10_000 })
    assert.match(await page.locator('section.group .totals').innerText(), /CPU \d+% · memory [\d.]+ (MiB|GiB)/)
    assert.match(await cellText(page, busy.id, 'uptime'), /^\d+s$/)
  })

  it('kills a process with the signal chosen in the dialog, and restarts a service, from its buttons', async () => {
    const { manager, view } = await managerView()
    const victim = await manager.exec(['sleep', '300'])
    const service = await manager.exec(['sleep', '300'], { restart: { policy: 'always' } })
    const page = await openIndex(view)
    const row = (id) => page.locator(`tr[data-ref="${id}"]`)

    await row(victim.id).getByRole('button', { name: 'Kill' }).click()
    await page.getByRole('dialog').waitFor()
    await page.selectOption('#signal', 'SIGKILL')
    await page.getByRole('button', { name: 'Confirm' }).click()
    const exit = await victim.waitForExit()
    assert.equal(exit.signal, 9, JSON.stringify(exit))
    await cellBecomes(page, victim.id, 'state', (t) => t.startsWith('exited'))

    const before = (await service.status()).pid
    await row(service.id).getByRole('button', { name: 'Restart' }).click()
    await cellBecomes(page, service.id, 'restarts', (t) => t === '1')
    const now = await service.status()
    assert.equal(now.restarts, 1)
    assert.notEqual(now.pid, before)
    await cellBecomes(page, service.id, 'pid', (t) => t === String(now.pid))
  })

  it('refuses a POST from another origin, without the cookie, or without proof of its origin', async () => {
    const { manager, view } = await managerView()
    const p = await manager.exec(['sleep', '300'])
    const u = new URL(view.url)
    const cookie = `procvisor_web_${u.port}=${u.searchParams.get('token')}`
    const path = `/api/p/manager-1/${p.id}/kill`
    const body = '{"signal":"SIGKILL"}'
    assert.equal(await post(view, path, { cookie, origin: 'http://evil.example' }, body), 403)
    assert.equal(await post(view, path, { cookie, origin: `http://localhost:${u.port}`, host: `127.0.0.1:${u.port}` }, body), 403)
    assert.equal(await post(view, path, { cookie, 'sec-fetch-site': 'same-site' }, body), 403)
    assert.equal(await post(view, path, { origin: u.origin }, body), 403)
    assert.equal(await post(view, path, { cookie }, body), 403, 'neither Origin nor Sec-Fetch-Site')
    assert.equal(await post(view, `${path}?token=${u.searchParams.get('token')}`, { origin: u.origin }, body), 403, 'the token in the URL')
    assert.equal((await p.status()).state, 'running', 'none of them reached the process')
    assert.equal(await post(view, path, { cookie, origin: u.origin }, body), 200)
    assert.equal((await p.waitForExit()).signal, 9)
  })

  it("counts down a persistent sandbox's lifetime, kills its process, and stops it from its buttons", async () => {
    const id = freshId()
    const children = []
    cleanups.push(async () => {
      await sweep(id)
      for (const c of children) c.kill('SIGKILL')
    })
    const started = startElsewhere(children, { id, workingDirectory: path.join(session.dir, id), options: ', timeoutMs: 600000' }, `const p = await sb.processes.spawn('sleep 300')
console.log(JSON.stringify({ pid: p.pid }))`)
    const { pid } = await started.first
    await started.exited
    const view = await startServer({ catalog: persistentCatalog })
    cleanups.push(() => view.close())
    const page = await openIndex(view)
    const section = page.locator(`section[data-key="${id}"]`)
    await section.locator('.expires').filter({ hasText: /expires in (9m|10m)/ }).waitFor()
    const ref = String(pid)
    await cellBecomes(page, ref, 'state', (t) => t === 'running')

    await section.locator(`tr[data-ref="${ref}"]`).getByRole('button', { name: 'Kill' }).click()
    await page.selectOption('#signal', 'SIGKILL')
    await page.getByRole('button', { name: 'Confirm' }).click()
    await cellBecomes(page, ref, 'state', (t) => t.startsWith('exited'))
    assert.throws(() => process.kill(pid, 0), { code: 'ESRCH' }, 'the process is gone')

    await section.getByRole('button', { name: 'Stop' }).click()
    assert.match(await page.locator('#confirm-text').innerText(), new RegExp(`Stop sandbox ${id}`))
    await page.getByRole('button', { name: 'Confirm' }).click()
    await section.waitFor({ state: 'detached', timeout: 10_000 })
    assert.equal((await persistentCatalog.list()).some((g) => g.key === id), false, 'its supervisor is gone')
  })

  it('reads the catalog at most every 500 ms while an index page is connected, and not at all without one', async () => {
    const manager = new ProcessManager({ workingDirectory: session.dir })
    cleanups.push(() => manager.close())
    await manager.exec(['sleep', '300'])
    const inner = appCatalog({ managers: [manager] })
    let reads = 0
    const catalog = { ...inner, list: () => (reads++, inner.list()) }
    const view = await startServer({ catalog })
    cleanups.push(() => view.close())
    const u = new URL(view.url)
    const ws = new WebSocket(`ws://${u.host}/ws/state`, { headers: { cookie: `procvisor_web_${u.port}=${u.searchParams.get('token')}`, origin: u.origin } })
    const messages = []
    ws.on('message', (d) => messages.push(JSON.parse(d)))
    await new Promise((r) => ws.once('open', r))
    await new Promise((r) => setTimeout(r, 1600))
    assert.ok(reads >= 2 && reads <= 5, `${reads} reads in 1.6 s: at most one every 500 ms`)
    assert.equal(messages[0].rows.set.length, 1, 'everything first')
    ws.close()
    await new Promise((r) => setTimeout(r, 700))
    const after = reads
    await new Promise((r) => setTimeout(r, 1500))
    assert.equal(reads, after, 'no page, no reads')
  })
})
