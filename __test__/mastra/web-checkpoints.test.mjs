// A sandbox's checkpoints in the web view's index, in a real headless Chromium: captured, rolled
// back and deleted from the page's buttons, a capture made elsewhere shown without a reload, and
// the answers to bad requests. On both backends through createWebView, and for `procvisor web`'s
// own catalog of persistent sandboxes.
import { it } from 'node:test'
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import * as fs from 'node:fs'
import * as http from 'node:http'
import { createRequire } from 'node:module'
import * as path from 'node:path'
import { describeBackends, privateSockets } from './backends.mjs'
import { startElsewhere, freshId, sweep } from './persistent-common.mjs'
import { browserAndView, browserSession, recordingPage } from './web-browser.mjs'

const require = createRequire(import.meta.url)
const { startServer } = require('../../lib/web/server.js')
const { persistentCatalog } = require('../../lib/cli/web.js')

privateSockets()

async function openIndex(browser, view) {
  const page = await recordingPage(browser, { width: 1200, height: 700 })
  await page.goto(view.url)
  await page.waitForFunction(() => document.body.dataset.connected === 'true')
  return page
}

/** The names of the checkpoint rows a group's section shows. */
const shownNames = (section) => section.locator('tr.checkpoint td.name').allInnerTexts()

/** Waits until the section shows exactly `names`. */
async function showsNames(section, names, timeout = 10_000) {
  const end = Date.now() + timeout
  let now
  while (Date.now() < end) {
    now = await shownNames(section)
    if (JSON.stringify(now) === JSON.stringify(names)) return
    await new Promise((r) => setTimeout(r, 25))
  }
  throw new Error(`the page shows checkpoints ${JSON.stringify(now)}, not ${JSON.stringify(names)}`)
}

/** A POST to the view as its own page makes it: `{ status, body }`. */
function post(view, pathname, body) {
  const u = new URL(view.url)
  const headers = { 'content-type': 'application/json', cookie: `procvisor_web_${u.port}=${u.searchParams.get('token')}`, origin: u.origin }
  return new Promise((resolve, reject) => {
    const req = http.request({ host: u.hostname, port: u.port, path: pathname, method: 'POST', headers }, (res) => {
      let text = ''
      res.setEncoding('utf8')
      res.on('data', (d) => (text += d))
      res.on('end', () => resolve({ status: res.statusCode, body: JSON.parse(text) }))
    })
    req.on('error', reject)
    req.end(body)
  })
}

describeBackends("a sandbox's checkpoints in the web view", ['native', 'persistent'], { timeout: 60000 }, (backend) => {
  const ctx = browserAndView('web-checkpoints', backend)

  it('captures, shows a capture made elsewhere live, rolls back and deletes from the buttons; asks before replacing one', async () => {
    const sb = ctx.sandbox
    const wd = sb.workingDirectory
    fs.writeFileSync(path.join(wd, 'app.js'), 'v1\n')
    const page = await openIndex(ctx.browser, ctx.view)
    const section = page.locator('section.group')
    await section.locator('.checkpoints-empty', { hasText: 'no checkpoints' }).waitFor()

    await section.getByLabel('checkpoint name').fill('before')
    await section.getByRole('button', { name: 'Capture' }).click()
    await showsNames(section, ['before'])
    assert.match(await page.locator('#notice').innerText(), /^captured before: 1 files, 3 B written \(0 files shared with the last capture\)$/)
    assert.equal(await section.getByLabel('checkpoint name').inputValue(), '', 'the name is cleared once used')
    const row = section.locator('tr.checkpoint', { hasText: 'before' })
    assert.deepEqual(await row.locator('td.files, td.size, td.written').allInnerTexts(), ['1', '3 B', '3 B'])
    assert.match(await row.locator('td.created').innerText(), /^\d+s ago$/)

    // The agent's edits, and a capture it made: on the page without a reload.
    fs.writeFileSync(path.join(wd, 'app.js'), 'v2, broken\n')
    fs.writeFileSync(path.join(wd, 'scratch.txt'), 'notes')
    await sb.checkpoints.capture('after')
    await showsNames(section, ['before', 'after'])

    await row.getByRole('button', { name: 'Restore' }).click()
    assert.match(await page.locator('#confirm-text').innerText(), new RegExp(`back to checkpoint before\\?`))
    await page.getByRole('button', { name: 'Confirm' }).click()
    await page.locator('#notice', { hasText: 'restored before' }).waitFor()
    assert.equal(await page.locator('#notice').innerText(), 'restored before: 1 of 1 files written back, 1 entries removed')
    assert.equal(fs.readFileSync(path.join(wd, 'app.js'), 'utf8'), 'v1\n')
    assert.deepEqual(fs.readdirSync(wd), ['app.js'])

    // What a capture left out is said: a FIFO holds no data to copy.
    execFileSync('mkfifo', [path.join(wd, 'pipe')])
    await section.getByLabel('checkpoint name').fill('with-pipe')
    await section.getByRole('button', { name: 'Capture' }).click()
    await page.locator('#notice', { hasText: 'captured with-pipe' }).waitFor()
    assert.match(await page.locator('#notice').innerText(), /^captured with-pipe: 1 files, .*; not in it: 1 entries \(fifo\)$/)
    fs.rmSync(path.join(wd, 'pipe'))
    await sb.checkpoints.delete('with-pipe')

    // A capture under a name that exists asks first; cancelled, the checkpoint stays as it was.
    const made = (await sb.checkpoints.list()).find((c) => c.name === 'after').createdAt.getTime()
    await section.getByLabel('checkpoint name').fill('after')
    await section.getByRole('button', { name: 'Capture' }).click()
    assert.match(await page.locator('#confirm-text').innerText(), /Replace checkpoint after/)
    await page.getByRole('button', { name: 'Cancel' }).click()
    assert.equal((await sb.checkpoints.list()).find((c) => c.name === 'after').createdAt.getTime(), made)

    await section.locator('tr.checkpoint', { hasText: 'after' }).getByRole('button', { name: 'Delete' }).click()
    assert.match(await page.locator('#confirm-text').innerText(), /Delete checkpoint after/)
    await page.getByRole('button', { name: 'Confirm' }).click()
    await showsNames(section, ['before'])
    assert.deepEqual((await sb.checkpoints.list()).map((c) => c.name), ['before'])

    // A bad name: refused with the typed error's sentence, nothing captured.
    await section.getByLabel('checkpoint name').fill('../up')
    await section.getByRole('button', { name: 'Capture' }).click()
    await page.locator('#notice', { hasText: 'refused' }).waitFor()
    assert.match(await page.locator('#notice').innerText(), /Invalid checkpoint name: \.\.\/up/)
    assert.deepEqual((await sb.checkpoints.list()).map((c) => c.name), ['before'])
    await page.close()
  })

  it('answers a bad checkpoint request with its status and a sentence, and does nothing', async () => {
    const page = await openIndex(ctx.browser, ctx.view)
    const key = await page.locator('section.group').getAttribute('data-key')
    await page.close()
    const at = `/api/g/${encodeURIComponent(key)}/checkpoint`
    const names = async () => (await ctx.sandbox.checkpoints.list()).map((c) => `${c.name}@${c.createdAt.getTime()}`)
    const before = await names()
    const bad = await post(ctx.view, at, '{"action":"format"}')
    assert.deepEqual([bad.status, bad.body.error], [400, 'action must be capture, restore or delete'])
    const nameless = await post(ctx.view, at, '{"action":"restore"}')
    assert.deepEqual([nameless.status, nameless.body.error], [400, "restore needs the checkpoint's name"])
    const unknown = await post(ctx.view, at, '{"action":"restore","name":"never-made"}')
    assert.equal(unknown.status, 404)
    assert.match(unknown.body.error, /no checkpoint named "never-made"/)
    const noSandbox = await post(ctx.view, '/api/g/nobody/checkpoint', '{"action":"capture"}')
    assert.deepEqual([noSandbox.status, noSandbox.body.error], [404, 'no such sandbox'])
    assert.deepEqual(await names(), before, 'no checkpoint made, replaced or deleted')
  })
})

const session = browserSession('web-checkpoints-cli')

it("procvisor web: a persistent sandbox's checkpoints, captured and rolled back from the page", { timeout: 60000 }, async () => {
  const id = freshId()
  const children = []
  session.cleanups.push(async () => {
    await sweep(id)
    for (const c of children) c.kill('SIGKILL')
  })
  const wd = path.join(session.dir, id)
  const started = startElsewhere(children, { id, workingDirectory: wd, options: ', timeoutMs: 600000' }, `console.log(JSON.stringify({ ok: true }))`)
  await started.first
  await started.exited
  fs.writeFileSync(path.join(wd, 'notes.md'), 'kept\n')
  const view = await startServer({ catalog: persistentCatalog })
  session.cleanups.push(() => view.close())
  const page = await openIndex(session.browser, view)
  const section = page.locator(`section[data-key="${id}"]`)
  await section.locator('.checkpoints-empty', { hasText: 'no checkpoints' }).waitFor()
  await section.getByLabel('checkpoint name').fill('clean')
  await section.getByRole('button', { name: 'Capture' }).click()
  await showsNames(section, ['clean'])
  fs.writeFileSync(path.join(wd, 'notes.md'), 'overwritten\n')
  await section.locator('tr.checkpoint', { hasText: 'clean' }).getByRole('button', { name: 'Restore' }).click()
  await page.getByRole('button', { name: 'Confirm' }).click()
  await page.locator('#notice', { hasText: 'restored clean' }).waitFor()
  assert.equal(fs.readFileSync(path.join(wd, 'notes.md'), 'utf8'), 'kept\n')
  // What the page captured is what `procvisor checkpoint ls` lists: the sandbox's own directory.
  assert.deepEqual(fs.readdirSync(path.join(path.dirname(wd), '.checkpoints')).filter((n) => !n.startsWith('.')), ['clean'])
  await page.close()
})
