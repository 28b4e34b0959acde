#!/usr/bin/env node
// `node scripts/node22.js scripts/web-screenshot.mjs`: the README's pictures of the web view
// (docs/web-view-index.png, docs/web-view-terminal.png), taken in Debian's headless Chromium from a
// web view of a few real processes and a terminal.
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
const terminal = await manager.createTerminal({ command: ['/bin/bash', '--norc', '--noprofile', '-i'], env: { PS1: '\\[\\e[32m\\]agent\\[\\e[0m\\]$ ', HISTFILE: '/dev/null' }, cwd: dir })
const view = await createWebView({ managers: [manager], sandboxes: [sandbox] })
const browser = await launchChromium()
try {
  const page = await browser.newPage({ viewport: { width: 820, height: 380 } })
  await page.goto(view.url)
  await page.screenshot({ path: path.join(ROOT, 'docs/web-view-index.png') })
  await page.click(`a:text-is("${terminal.id}")`)
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
for (const f of ['web-view-index.png', 'web-view-terminal.png']) console.log(`docs/${f}: ${fs.statSync(path.join(ROOT, 'docs', f)).size} bytes`)
