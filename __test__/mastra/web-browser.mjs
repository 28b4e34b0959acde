// What the web view's browser tests share: Debian's Chromium driven by playwright-core, and
// readers of what a page shows.
import * as fs from 'node:fs'
import { createRequire } from 'node:module'
import { end } from './backends.mjs'

const require = createRequire(import.meta.url)
export const CHROMIUM = process.env.PROCVISOR_CHROMIUM || '/usr/bin/chromium'

/** Headless Chromium; a clear failure (not a skip) when it is not installed. */
export async function launchChromium() {
  if (!fs.existsSync(CHROMIUM)) {
    throw new Error(`the web view's browser tests need Chromium at ${CHROMIUM}: apt-get install -y chromium (.ci/run installs it)`)
  }
  const { chromium } = require('playwright-core')
  // A browser that closes while it starts (seen once in a full CI run on 2 busy vCPUs, before any
  // page: "Target page, context or browser has been closed") is started again, twice at most;
  // any other failure, or a third, is the test's.
  for (let attempt = 1; ; attempt++) {
    try {
      return await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] })
    } catch (e) {
      if (attempt === 3 || !/has been closed/.test(String(e && e.message))) throw e
    }
  }
}

/**
 * Chromium and a web view of one ProcessManager of its own, made before a file's tests and ended
 * after them: `ctx.browser`, `ctx.manager`, `ctx.view`, `ctx.dir` once they ran. Given a
 * `backend` of backends.mjs, the view shows a started sandbox of it instead, `ctx.sandbox`,
 * working in `<ctx.dir>/wd` (called in a describe block, made and ended around that block).
 */
export function browserAndView(prefix, backend) {
  const { before, after } = require('node:test')
  const { ProcessManager, createWebView } = require('../../index.js')
  const os = require('node:os')
  const path = require('node:path')
  const ctx = {}
  before(async () => {
    ctx.dir = fs.mkdtempSync(path.join(os.tmpdir(), `procvisor-${prefix}-`))
    ctx.browser = await launchChromium()
    if (backend) {
      ctx.sandbox = backend.make({ workingDirectory: path.join(ctx.dir, 'wd'), env: { PATH: process.env.PATH } })
      await ctx.sandbox.start()
      ctx.view = await createWebView({ sandboxes: [ctx.sandbox] })
    } else {
      ctx.manager = new ProcessManager({ workingDirectory: ctx.dir })
      ctx.view = await createWebView({ managers: [ctx.manager] })
    }
  })
  after(async () => {
    if (ctx.view) await ctx.view.close()
    if (ctx.manager) await ctx.manager.close()
    if (ctx.sandbox) await end(ctx.sandbox)
    if (ctx.browser) await ctx.browser.close()
    if (ctx.dir) fs.rmSync(ctx.dir, { recursive: true, force: true })
  })
  return ctx
}

/**
 * A file's browser and directory, made before its tests and gone after them, with `cleanups`
 * the tests add to (run in reverse, before the browser closes): `{ browser, dir, cleanups }`.
 */
export function browserSession(prefix) {
  const { before, after } = require('node:test')
  const os = require('node:os')
  const path = require('node:path')
  const ctx = { cleanups: [] }
  before(async () => {
    ctx.dir = fs.mkdtempSync(path.join(os.tmpdir(), `procvisor-${prefix}-`))
    ctx.browser = await launchChromium()
  })
  after(async () => {
    for (const c of ctx.cleanups.reverse()) await c()
    if (ctx.browser) await ctx.browser.close()
    if (ctx.dir) fs.rmSync(ctx.dir, { recursive: true, force: true })
  })
  return ctx
}

/**
 * A page whose WebSockets are recorded in `window.__sockets`, so that a test can drop one as a
 * network would.
 */
export async function recordingPage(browser, viewport = { width: 900, height: 500 }) {
  const page = await browser.newPage({ viewport })
  await page.addInitScript(() => {
    const Native = window.WebSocket
    window.__sockets = []
    window.WebSocket = class extends Native {
      constructor(...args) {
        super(...args)
        window.__sockets.push(this)
      }
    }
  })
  return page
}

/** Drops the page's newest WebSocket; resolves once the page has opened another. */
export async function dropConnection(page) {
  const before = await page.evaluate(() => {
    window.__sockets.at(-1).close()
    return window.__sockets.length
  })
  await page.waitForFunction((n) => window.__sockets.length > n && window.__sockets.at(-1).readyState === 1, before)
}

/** The rows of the xterm.js screen on the page, as text, trailing blanks removed. */
export function screenLines(page) {
  return page.evaluate(() => [...document.querySelectorAll('.xterm-rows > div')].map((d) => d.textContent.replace(/\u00a0/g, ' ').trimEnd()))
}

/** Waits until a row of the screen matches `re`; the rows on failure. */
export async function screenShows(page, re, timeout = 10_000) {
  const end = Date.now() + timeout
  let lines
  while (Date.now() < end) {
    lines = await screenLines(page)
    if (lines.some((l) => re.test(l))) return lines
    await new Promise((r) => setTimeout(r, 50))
  }
  throw new Error(`the screen never showed ${re}:\n${(lines || []).join('\n')}`)
}
