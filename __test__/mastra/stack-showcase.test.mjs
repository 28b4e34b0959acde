// demo/stack-showcase.mjs, as `npm run demo` runs it: a persistent stack brought up, shown by
// procvisor ls, ps and logs (a restarting service's restarts included) and by procvisor web, then
// brought down with nothing left running.
import test from 'node:test'
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import * as path from 'node:path'
import { fileURLToPath } from 'node:url'
import { privateSockets } from './backends.mjs'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..')
privateSockets()

test('the stack showcase brings a stack up, shows it with ls, ps, logs and web, and brings it down', { timeout: 120_000 }, () => {
  const r = spawnSync(process.execPath, [path.join(root, 'demo', 'stack-showcase.mjs')], { cwd: root, encoding: 'utf8', timeout: 110_000 })
  const out = r.stdout
  assert.equal(r.status, 0, `${out}\n${r.stderr}`)
  const after = (command) => out.slice(out.indexOf(`$ procvisor ${command}\n`))
  assert.match(after('up --detach'), /up: 4 started/)
  assert.match(after('ls'), /^ {2}shop-demo +\d+ .* never +4 /m)
  const ps = after('ps shop-demo')
  for (const name of ['db', 'api', 'worker']) assert.match(ps, new RegExp(`^  \\d+ +${name} +running `, 'm'))
  assert.match(ps, /^ {2}\d+ +flaky +exited \(2 restarts\)/m)
  assert.match(after('logs shop-demo flaky'), /flaky: up, failing in a moment\n {2}--- restart 1 \(exited with code 3\) ---\n {2}flaky: up, failing in a moment\n {2}--- restart 2 \(exited with code 3\) ---\n {2}flaky: up, failing in a moment\n/)
  assert.match(after('web'), /^\$ procvisor web\n {2}http:\/\/127\.0\.0\.1:\d+\/\?token=[\w-]+\n {2}GET with the token: 303/)
  assert.match(after('down'), /down: 3 stopped, sandbox shop-demo stopped\n {2}\$ procvisor ls\n {2}no persistent sandboxes are running/)
  const ls = spawnSync(process.execPath, [path.join(root, 'bin', 'procvisor.js'), 'ls'], { encoding: 'utf8' })
  assert.equal(ls.stdout.trim(), 'no persistent sandboxes are running', 'nothing left running')
})
