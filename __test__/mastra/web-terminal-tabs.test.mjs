// Several terminals side by side on one page, in tabs: each its own xterm on its own socket, so
// what is typed in one tab reaches that terminal alone. A ProcessManager's terminals, and a
// sandbox's processes on a pseudo-terminal on both procvisor backends (a sandbox's group in the view
// lists its processes, not sandbox.terminals).
import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { browserAndView, recordingPage } from './web-browser.mjs'
import { describeBackends } from './backends.mjs'

const SHELL = { command: ['/bin/bash', '--norc', '--noprofile', '-i'], env: { PS1: '$ ', HISTFILE: '/dev/null' }, cols: 80, rows: 24 }

/** The rows of the screen in the tab of terminal `ref`. */
function paneLines(page, ref) {
  return page.evaluate((r) => [...document.querySelectorAll(`.pane[data-ref="${r}"] .xterm-rows > div`)].map((d) => d.textContent.replace(/\u00a0/g, ' ').trimEnd()), ref)
}

async function paneShows(page, ref, re) {
  const end = Date.now() + 10_000
  let lines = []
  while (Date.now() < end) {
    lines = await paneLines(page, ref)
    if (lines.some((l) => re.test(l))) return lines
    await new Promise((r) => setTimeout(r, 50))
  }
  throw new Error(`the tab of ${ref} never showed ${re}:\n${lines.join('\n')}`)
}

/** Tabs over a view of `backend`'s sandbox, or of a ProcessManager without one. */
function tabs(backend) {
  const ctx = browserAndView('web-tabs', backend)
  /** A shell on a terminal: its `id` (its ref in the view) and the text its tab is offered by. */
  async function shell(name) {
    if (!backend) {
      const t = await ctx.manager.createTerminal(SHELL)
      return { id: t.id, label: t.id }
    }
    const label = `TAB=${name} exec ${SHELL.command.join(' ')}`
    const h = await ctx.sandbox.processes.spawn(label, { pty: { cols: SHELL.cols, rows: SHELL.rows }, env: SHELL.env })
    return { id: String(h.pid), label }
  }
  /** Opens the terminal page of `t` from the index. */
  async function open(page, t) {
    await page.goto(ctx.view.url)
    if (!backend) return page.click(`a:text-is("${t.id}")`)
    return page.goto(new URL(`/t/${encodeURIComponent(ctx.sandbox.id)}/${t.id}`, ctx.view.url).href)
  }
  const spawn = (command) => (backend ? ctx.sandbox.processes.spawn(command) : ctx.manager.spawn(command))

  it('two terminals in tabs each take their own input', async () => {
    const a = await shell('a')
    const b = await shell('b')
    const page = await recordingPage(ctx.browser, { width: 900, height: 500 })
    await open(page, a)
    await paneShows(page, a.id, /^\$$/)
    await page.click(`a.add-tab:text("${b.label}")`)
    assert.equal(await page.locator('.tabs button').count(), 2)
    await paneShows(page, a.id, /^\$$/)
    await page.keyboard.type('echo one-$((1+1))\n')
    await paneShows(page, a.id, /^one-2$/)

    await page.click(`.tabs button[data-ref="${b.id}"]`)
    assert.equal(await page.locator(`.pane[data-ref="${a.id}"]`).isVisible(), false, 'one tab shown at a time')
    await paneShows(page, b.id, /^\$$/)
    await page.keyboard.type('echo two-$((2+2))\n')
    await paneShows(page, b.id, /^two-4$/)
    assert.ok(!(await paneLines(page, b.id)).some((l) => l.includes('one-2')), 'the first tab typed nothing into the second terminal')
    assert.ok(!(await paneLines(page, a.id)).some((l) => l.includes('two-4')), 'the second tab typed nothing into the first terminal')

    await page.click(`.tabs button[data-ref="${a.id}"]`)
    await page.keyboard.type('echo again-$((3+3))\n')
    await paneShows(page, a.id, /^again-6$/)
    assert.ok(!(await paneLines(page, b.id)).some((l) => l.includes('again-6')))

    // A tab names a terminal of the same group, or the page is refused.
    const plain = await spawn('sleep 30')
    const u = new URL(page.url())
    const refused = await page.goto(`${u.origin}${u.pathname}?tab=${plain.pid}`)
    assert.equal(refused.status(), 404)
    await plain.kill()
    await page.close()
  })
}

describe('terminals in tabs: a ProcessManager', () => tabs())
describeBackends('terminals in tabs', ['native', 'persistent'], tabs)
