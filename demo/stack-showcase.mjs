// procvisor showcase: a persistent stack from examples/stack/ (a database, an API that needs it
// ready, a worker that needs the API healthy) plus a service that fails and is restarted by its
// policy. It is brought up detached, looked at with the commands a user would type (procvisor
// ls, ps, logs), served by procvisor web, and brought down: nothing it started is left running.
import { spawn, spawnSync } from 'node:child_process'
import * as fs from 'node:fs'
import * as os from 'node:os'
import * as path from 'node:path'
import { createRequire } from 'node:module'

const require = createRequire(import.meta.url)
const root = path.dirname(require.resolve('procvisor/package.json'))
const BIN = path.join(root, 'bin', 'procvisor.js')
const ID = 'shop-demo'

const bold = (s) => (process.stdout.isTTY ? `\x1b[1m${s}\x1b[0m` : s)
const dim = (s) => (process.stdout.isTTY ? `\x1b[2m${s}\x1b[0m` : s)
const step = (s) => console.log(`\n${bold('▸ ' + s)}`)
const indent = (s) => s.trimEnd().replace(/^/gm, '  ')

/**
 * Runs `procvisor <args>` as a user would, printing the command and what it printed, stdout and
 * stderr in the order they were written (both go to one file).
 */
function procvisor(args, { show = true } = {}) {
  const out = path.join(dir, '.out')
  const fd = fs.openSync(out, 'w')
  let r
  try {
    r = spawnSync(process.execPath, [BIN, ...args], { cwd: dir, stdio: ['ignore', fd, fd], timeout: 60_000 })
  } finally {
    fs.closeSync(fd)
  }
  const text = fs.readFileSync(out, 'utf8')
  if (show) {
    console.log(`  $ procvisor ${args.join(' ')}`)
    if (text.trim()) console.log(indent(text))
  }
  if (r.status !== 0) throw new Error(`procvisor ${args.join(' ')} exited ${r.status}: ${text}`)
  return text
}

// The example's files in a directory of this run's own, its config given another id and a
// service that fails after a moment, restarted twice by its policy.
const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'procvisor-stack-demo-')))
const example = path.join(root, 'examples', 'stack')
for (const f of fs.readdirSync(example)) fs.copyFileSync(path.join(example, f), path.join(dir, f))
const config = fs.readFileSync(path.join(example, 'procvisor.config.yaml'), 'utf8').replace(/^id: shop\b/m, `id: ${ID}`)
fs.writeFileSync(
  path.join(dir, 'procvisor.config.yaml'),
  `${config.trimEnd()}
  flaky:
    command: [node, -e, "console.log('flaky: up, failing in a moment'); setTimeout(() => process.exit(3), 300)"]
    restart: { policy: on-failure, maxRestarts: 2, backoffMs: { initial: 200 } }
`,
)

let up = false
let web
try {
  step('Bring the stack up, detached: a persistent sandbox that outlives this script')
  console.log(dim(indent(fs.readFileSync(path.join(dir, 'procvisor.config.yaml'), 'utf8').replace(/^#.*\n/, ''))))
  up = true
  procvisor(['up', '--detach'])

  // The flaky service's two restarts and its last run: 3 × 300 ms and the backoff between.
  await new Promise((r) => setTimeout(r, 2000))

  step('The persistent sandboxes of this user')
  procvisor(['ls'])

  step("The stack's processes, their state and readiness")
  procvisor(['ps', ID])

  step("The flaky service's log: each run's output, a line on stderr for each restart")
  procvisor(['logs', ID, 'flaky'])

  step('The web view of the same sandboxes (the URL holds the token every request needs)')
  web = spawn(process.execPath, [BIN, 'web'], { cwd: dir, stdio: ['ignore', 'pipe', 'ignore'] })
  const url = await new Promise((resolve, reject) => {
    let out = ''
    web.stdout.on('data', (d) => {
      out += d
      if (out.includes('\n')) resolve(out.split('\n')[0].trim())
    })
    web.once('exit', (code) => reject(new Error(`procvisor web exited ${code}`)))
  })
  console.log(`  $ procvisor web\n  ${url}`)
  const res = await fetch(url, { redirect: 'manual' })
  console.log(dim(`  GET with the token: ${res.status}, the token set as a cookie (${res.headers.get('set-cookie') ? 'yes' : 'no'})`))
} finally {
  if (web) {
    web.kill('SIGINT')
    await new Promise((r) => (web.exitCode !== null ? r() : web.once('exit', r)))
  }
  if (up) {
    step('Bring it down: every process stopped, the sandbox gone')
    procvisor(['down'])
    procvisor(['ls'])
  }
  fs.rmSync(dir, { recursive: true, force: true })
}
