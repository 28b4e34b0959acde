#!/usr/bin/env node
// `node scripts/node22.js scripts/web-screenshot.mjs`: the README's pictures of the web view
// (docs/web-view-index.png, docs/web-view-log.png, docs/web-view-terminal.png), 1000 px wide, taken
// in Debian's headless Chromium from a web view of a few real processes and terminals.
import * as fs from 'node:fs'
import * as os from 'node:os'
import * as path from 'node:path'
import { fileURLToPath } from 'node:url'
import { createRequire } from 'node:module'

const require = createRequire(import.meta.url)
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const { ProcessManager, createWebView } = require(ROOT)
const { NativeLocalSandbox } = require(path.join(ROOT, 'mastra'))
const { launchChromium, screenShows } = await import(path.join(ROOT, '__test__/mastra/web-browser.mjs'))

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'procvisor-shot-'))
for (const f of ['README.md', 'package.json', 'index.js']) fs.writeFileSync(path.join(dir, f), '')
fs.mkdirSync(path.join(dir, 'src'))
const manager = new ProcessManager({ workingDirectory: dir })
const sandbox = new NativeLocalSandbox({ id: 'agent-sandbox', workingDirectory: path.join(dir, 'agent') })
await sandbox.start()
await sandbox.processes.spawn('npm run dev -- --port 5173 2>/dev/null || sleep 600')
await sandbox.processes.spawn('echo "tests passed: 42"').then((h) => h.wait())
await manager.spawn('while true; do date +"%T heartbeat"; sleep 1; done')
// A service whose log has requests, errors on stderr and a restart between its two runs.
fs.writeFileSync(path.join(dir, 'serve.sh'), 'for i in $(seq 1 30); do s=200; [ $((i % 7)) = 0 ] && s=502; echo "GET /api/items/$i $s $((i * 3))ms"; [ $s = 502 ] && echo "error: upstream closed the connection (item $i)" >&2; sleep 0.02; done; exit 1\n')
await manager.exec(['sh', 'serve.sh'], { name: 'api', restart: { policy: 'on-failure', maxRestarts: 1, backoffMs: { initial: 100 } } })
const terminal = await manager.createTerminal({ command: ['/bin/bash', '--norc', '--noprofile', '-i'], env: { PS1: '\\[\\e[32m\\]agent\\[\\e[0m\\]$ ', HISTFILE: '/dev/null' }, cwd: dir })
const second = await manager.createTerminal({ command: ['/bin/bash', '--norc', '--noprofile', '-i'], env: { PS1: '$ ', HISTFILE: '/dev/null' }, cwd: dir })
const view = await createWebView({ managers: [manager], sandboxes: [sandbox] })
const browser = await launchChromium()
try {
  const page = await browser.newPage({ viewport: { width: 1000, height: 440 } })
  await page.goto(view.url)
  await page.waitForTimeout(1500) // a reading or two of CPU and memory for the sparklines
  await page.screenshot({ path: path.join(ROOT, 'docs/web-view-index.png') })
  await page.click('a:text-is("sh serve.sh")')
  await page.waitForFunction(() => document.querySelector('#log .marker') && document.getElementById('state').textContent.startsWith('exited'))
  await page.fill('#search', '/\\b5\\d\\d\\b|error/')
  await page.waitForFunction(() => document.querySelector('#log mark'))
  await page.screenshot({ path: path.join(ROOT, 'docs/web-view-log.png') })
  await page.goto(view.url)
  await page.click(`a:text-is("${terminal.id}")`)
  await screenShows(page, /agent\$/)
  await page.click(`a.add-tab:text("${second.id}")`)
  await screenShows(page, /agent\$/)
  await page.keyboard.type('echo $((6*7)); ls; stty size\n')
  await screenShows(page, /^\d+ \d+$/)
  await page.screenshot({ path: path.join(ROOT, 'docs/web-view-terminal.png') })
} finally {
  await browser.close()
  await view.close()
  await manager.close()
  await sandbox.destroy()
  fs.rmSync(dir, { recursive: true, force: true })
}
for (const f of ['web-view-index.png', 'web-view-log.png', 'web-view-terminal.png']) console.log(`docs/${f}: ${fs.statSync(path.join(ROOT, 'docs', f)).size} bytes`)
