// 9: the web view's index as a person opens it: a manager with 200 running processes, the page
// loaded in headless Chromium (Debian's, through playwright-core), from the navigation to its first
// contentful paint and to its rows being filled by the live state stream. Each round opens a fresh
// page; the spread is over rounds.

import { createRequire } from 'node:module'
import { procvisor } from '../lib/setup.mjs'
import { median } from '../lib/stats.mjs'

const CHROMIUM = process.env.PROCVISOR_CHROMIUM || '/usr/bin/chromium'

export async function webSection({ rounds, processes, log }) {
  const { chromium } = createRequire(import.meta.url)('playwright-core')
  const { ProcessManager, createWebView } = procvisor()
  const pm = new ProcessManager()
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] })
  const paints = []
  const filled = []
  try {
    await Promise.all(Array.from({ length: processes }, (_, i) => pm.spawn(`sleep 600 # ${i}`)))
    const view = await createWebView({ managers: [pm] })
    try {
      const context = await browser.newContext()
      // The first visit trades the token for the cookie; every round then loads the index itself.
      const warm = await context.newPage()
      await warm.goto(view.url)
      await warm.close()
      const index = new URL('/', view.url).href
      for (let r = 0; r < rounds; r++) {
        const page = await context.newPage()
        await page.goto(index)
        await page.waitForFunction((n) => document.querySelectorAll('tr[data-ref]').length >= n, processes, { timeout: 30_000 })
        const t = await page.evaluate(() => ({
          paint: performance.getEntriesByName('first-contentful-paint')[0]?.startTime ?? NaN,
          now: performance.now(),
        }))
        paints.push(t.paint)
        filled.push(t.now)
        log(`   round ${r + 1}: first paint ${t.paint.toFixed(0)} ms, ${processes} rows at ${t.now.toFixed(0)} ms`)
        await page.close()
      }
    } finally {
      await view.close()
    }
  } finally {
    await browser.close()
    await pm.close()
  }
  return {
    processes,
    rounds,
    paintMs: { median: median(paints), min: Math.min(...paints), max: Math.max(...paints) },
    rowsMs: { median: median(filled), min: Math.min(...filled), max: Math.max(...filled) },
  }
}
