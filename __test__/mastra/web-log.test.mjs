// A process's log page in a real headless Chromium: search with highlighting over 100,000 lines,
// the stream filter, restart markers, a log opened after a cursor loading what came before, and
// the download of what is loaded. Of a ProcessManager's processes, and of a sandbox's on both
// procvisor backends.
import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import * as fs from 'node:fs'
import { browserAndView, recordingPage } from './web-browser.mjs'
import { describeBackends } from './backends.mjs'

/** The process page, in the view of `ctx`, of the process whose command holds `text`, its log loaded to the end. */
async function openLog(ctx, text, { ended = true } = {}) {
  const page = await recordingPage(ctx.browser, { width: 1000, height: 600 })
  await page.goto(ctx.view.url)
  await page.click(`a:text("${text}")`)
  if (ended) await page.waitForFunction(() => document.getElementById('state').textContent.startsWith('exited'))
  return page
}

async function search(page, text) {
  await page.fill('#search', text)
  await page.waitForFunction((t) => document.getElementById('log').dataset.query === t, text)
}

/** The log page's tests over a view of `backend`'s sandbox, or of a ProcessManager without one. */
function logPage(backend) {
  const ctx = browserAndView('web-log', backend)
  /** Runs shell `command`; a ProcessManager takes a service's options on exec(). */
  const spawn = (command, options) =>
    backend ? ctx.sandbox.processes.spawn(command, options) : options ? ctx.manager.exec(['sh', '-c', command], options) : ctx.manager.spawn(command)
  const logs = (p) => (backend ? p.nativeHandle : p).logs()
  // The index looks at a sandbox's processes without reading them in Mastra's sense: an exited
  // process's page and log stay there after the index was opened (each test opens it first).

  it('finds a line among 100,000 and highlights it; a regex too; an invalid regex says so', async () => {
    await spawn('seq 1 50000; echo "the needle-7 line"; seq 50001 99999').then((h) => h.wait())
    const page = await openLog(ctx, 'the needle-7 line')
    await page.waitForFunction(() => document.getElementById('log').textContent.endsWith('99999\n'))
    const started = Date.now()
    await search(page, 'needle-7')
    assert.equal(await page.locator('#found').textContent(), '1 matching line')
    assert.deepEqual(await page.locator('#log mark').allTextContents(), ['needle-7'])
    assert.equal(await page.locator('#log').textContent(), 'the needle-7 line\n', 'only the matching line is rendered')
    assert.ok(Date.now() - started < 5000, `the search took ${Date.now() - started} ms`)

    await search(page, '/^9999[0-9]$/')
    assert.equal(await page.locator('#found').textContent(), '10 matching lines')
    assert.equal(await page.locator('#log mark').count(), 10)

    await search(page, '/(/')
    assert.match(await page.locator('#found').textContent(), /^invalid regular expression/)
    await page.fill('#search', '')
    await page.waitForFunction(() => document.getElementById('log').textContent.split('\n').length === 100001)
    await page.close()
  })

  it('labels stdout and stderr apart, and the stderr filter hides stdout', async () => {
    await spawn('echo out-one; echo err-one >&2; sleep 0.1; echo out-two; echo err-two >&2').then((h) => h.wait())
    const page = await openLog(ctx, 'echo out-one')
    await page.waitForFunction(() => document.getElementById('log').textContent.includes('err-two'))
    assert.equal(await page.locator('#log .stderr').allTextContents().then((t) => t.join('')), 'err-one\nerr-two\n')
    assert.equal(await page.locator('#log .stdout').allTextContents().then((t) => t.join('')), 'out-one\nout-two\n')
    await page.selectOption('#stream', 'stderr')
    assert.equal(await page.locator('#log').textContent(), 'err-one\nerr-two\n')
    await page.selectOption('#stream', 'stdout')
    assert.equal(await page.locator('#log').textContent(), 'out-one\nout-two\n')
    await page.close()
  })

  it('shows a restart marker between the runs of a restarting service', async () => {
    await spawn('echo run-of-flaky; exit 7', { restart: { policy: 'on-failure', maxRestarts: 1, backoffMs: { initial: 50 } } })
    const page = await openLog(ctx, 'run-of-flaky')
    await page.waitForFunction(() => document.querySelector('#log .marker'))
    const text = await page.locator('#log').textContent()
    assert.match(text, /^run-of-flaky\n── restarted \(attempt 1, after exit 7\) ──\nrun-of-flaky\n$/)
    await page.close()
  })

  it('shows a probe verdict as a marker line', async () => {
    const p = await spawn('echo probe-me; echo listening; sleep 30', { readiness: { log: 'listening', periodMs: 50 } })
    const page = await openLog(ctx, 'echo probe-me', { ended: false })
    await page.waitForFunction(() => document.querySelector('#log .marker'))
    assert.match(await page.locator('#log .marker').textContent(), /^── probe readiness: ok( \(.+\))? ──\n$/)
    await p.kill()
    await page.close()
  })

  it('puts a marker on a line of its own after output without a newline', async () => {
    await spawn('printf no-newline; exit 7', { restart: { policy: 'on-failure', maxRestarts: 1, backoffMs: { initial: 50 } } })
    const page = await openLog(ctx, 'printf no-newline')
    assert.equal(await page.locator('#log').textContent(), 'no-newline\n── restarted (attempt 1, after exit 7) ──\nno-newline')
    await page.close()
  })

  it('opened after a cursor, loads what came before it on demand', async () => {
    const p = await spawn('echo early-line; sleep 0.2; echo later-line')
    await p.wait()
    const events = []
    for await (const e of await logs(p)) events.push(e)
    const first = events.find((e) => e.type === 'stdout' && Buffer.from(e.data).toString().includes('early-line'))
    assert.ok(first && !Buffer.from(first.data).toString().includes('later-line'), 'two chunks, so a cursor between them')
    const page = await openLog(ctx, 'echo early-line', { ended: false })
    const u = new URL(page.url())
    await page.goto(`${u.origin}${u.pathname}?since=${encodeURIComponent(first.cursor)}`)
    await page.waitForFunction(() => document.getElementById('state').textContent.startsWith('exited'))
    assert.equal(await page.locator('#log').textContent(), 'later-line\n')
    await page.click('#older')
    await page.waitForFunction(() => document.body.dataset.older === 'loaded')
    assert.equal(await page.locator('#log').textContent(), 'early-line\nlater-line\n')
    await page.close()
  })

  it('follows the newest line, and paused stays where it is while the log goes on arriving', async () => {
    const p = await spawn('seq 1 200; echo follow-me; while read line; do seq 1 200; echo "more $line"; done')
    const page = await openLog(ctx, 'echo follow-me', { ended: false })
    await page.waitForFunction(() => document.getElementById('log').textContent.includes('follow-me'))
    await page.waitForFunction(() => window.scrollY > 0 && window.innerHeight + window.scrollY >= document.body.scrollHeight - 4)
    await page.mouse.move(300, 300)
    await page.mouse.wheel(0, -200)
    await page.waitForFunction(() => !document.getElementById('follow').checked)
    await page.evaluate(() => window.scrollTo(0, 0))
    await p.sendStdin('one\n')
    await page.waitForFunction(() => document.getElementById('log').textContent.endsWith('more one\n'))
    assert.equal(await page.evaluate(() => window.scrollY), 0, 'paused: the page was not scrolled')
    await page.check('#follow')
    await p.sendStdin('two\n')
    await page.waitForFunction(() => document.getElementById('log').textContent.endsWith('more two\n'))
    await page.waitForFunction(() => window.innerHeight + window.scrollY >= document.body.scrollHeight - 4)
    await p.closeStdin()
    await page.close()
  })

  it('downloads what is loaded as a .log file', async () => {
    await spawn('echo saved-one; sleep 0.1; echo saved-two >&2').then((h) => h.wait())
    const page = await openLog(ctx, 'echo saved-one')
    await page.waitForFunction(() => document.getElementById('log').textContent.includes('saved-two'))
    const [download] = await Promise.all([page.waitForEvent('download'), page.click('#download')])
    assert.match(download.suggestedFilename(), /\.log$/)
    assert.equal(fs.readFileSync(await download.path(), 'utf8'), 'saved-one\nsaved-two\n')
    await page.close()
  })
}

describe('the log page: a ProcessManager', () => logPage())
describeBackends('the log page', ['native', 'persistent'], logPage)
