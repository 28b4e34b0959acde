// Several terminals side by side on one page, in tabs: each its own xterm on its own socket, so
// what is typed in one tab reaches that terminal alone.
import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { browserAndView, recordingPage } from './web-browser.mjs'

const SHELL = { command: ['/bin/bash', '--norc', '--noprofile', '-i'], env: { PS1: '$ ', HISTFILE: '/dev/null' }, cols: 80, rows: 24 }
const ctx = browserAndView('web-tabs')

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

describe('terminals in tabs', () => {
  it('two terminals in tabs each take their own input', async () => {
    const a = await ctx.manager.createTerminal(SHELL)
    const b = await ctx.manager.createTerminal(SHELL)
    const page = await recordingPage(ctx.browser, { width: 900, height: 500 })
    await page.goto(ctx.view.url)
    await page.click(`a:text-is("${a.id}")`)
    await paneShows(page, a.id, /^\$$/)
    await page.click(`a.add-tab:text("${b.id}")`)
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
    const plain = await ctx.manager.spawn('sleep 30')
    const u = new URL(page.url())
    const refused = await page.goto(`${u.origin}${u.pathname}?tab=${plain.pid}`)
    assert.equal(refused.status(), 404)
    await plain.kill()
    await page.close()
  })
})
