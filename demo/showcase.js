'use strict'
// procvisor showcase: a dev server in the background, its output streamed, readiness waits,
// a few commands, list(), a kill that reaches the whole group, and typed errors.
const path = require('node:path')
const net = require('node:net')
const { ProcessManager, InvalidProcessCwdError } = require('..')

const bold = (s) => (process.stdout.isTTY ? `\x1b[1m${s}\x1b[0m` : s)
const dim = (s) => (process.stdout.isTTY ? `\x1b[2m${s}\x1b[0m` : s)
const step = (s) => console.log(`\n${bold('▸ ' + s)}`)

function freePort() {
  return new Promise((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address()
      s.close(() => resolve(port))
    })
  })
}

async function main() {
  const pm = new ProcessManager({ workingDirectory: path.join(__dirname, '..'), env: { GREETING: 'hello from the sandbox env' } })
  const port = await freePort()

  step(`Start a small HTTP server in the background (port ${port}), streaming its output`)
  const server = await pm.spawn(
    `node -e "
      const http = require('http');
      http.createServer((q, r) => { console.log('request', q.method, q.url); r.end('ok from ' + process.pid) })
        .listen(${port}, '127.0.0.1', () => console.log('listening on ${port}'))"`,
    { onStdout: (d) => process.stdout.write(dim(`  [server] ${d}`)) },
  )
  console.log(`  spawned: pid ${server.pid} (its own process group), id ${server.id}`)

  step('Wait until it is ready: a log line, then an HTTP check')
  const ready = await server.waitForLog(/listening on \d+/, { timeout: 10_000 })
  console.log(`  matched "${ready.match}" on ${ready.stream}`)
  await server.waitForPort(port, { mode: 'http', path: '/health', timeout: 10_000 })
  console.log('  HTTP /health answered 2xx')

  step('Run a few commands (shell form and argv form)')
  const curl = await (await pm.spawn(`node -e "fetch('http://127.0.0.1:${port}/hi').then(r => r.text()).then(console.log)"`)).wait()
  console.log(`  fetch → ${curl.stdout.trim()}  (exit ${curl.exitCode}, ${curl.executionTimeMs.toFixed(1)} ms)`)
  const env = await (await pm.spawn('echo "$GREETING"; echo "HOME is ${HOME:-unset}"')).wait()
  console.log(`  env → ${env.stdout.trim().split('\n').join(' | ')}`)
  const argv = await pm.exec(['printf', '%s|', 'no', '$SHELL', 'expansion', ''])
  console.log(`  exec argv → ${(await argv.output({ encoding: 'utf8' })).stdout}`)
  const missing = await (await pm.spawn('no-such-command-here')).wait()
  console.log(`  missing command → exit ${missing.exitCode}: ${missing.stderr.trim()}`)
  const slow = await (await pm.spawn('sleep 5 && echo never', { timeout: 200 })).wait()
  console.log(`  timeout 200 ms → exit ${slow.exitCode}, timedOut ${slow.timedOut}`)

  step('list()')
  for (const info of await pm.list()) {
    console.log(`  ${info.pid.padStart(7)}  ${info.running ? 'running' : `exit ${info.exitCode}`.padEnd(7)}  ${info.command.replace(/\s+/g, ' ').slice(0, 60)}`)
  }

  step('Replay the server log: every event carries a resumable cursor')
  const events = await server.logs({ replay: true })
  for await (const e of events) {
    if (e.type === 'stdout') console.log(`  ${dim(e.cursor)}  ${Buffer.from(e.data).toString().trim()}`)
  }

  step('Kill the server (SIGKILL to its whole process group)')
  console.log(`  kill(${server.pid}) → ${await pm.kill(server.pid)}`)
  console.log(`  exit code ${server.exitCode} (Mastra reports 128 for a signal), tracked: ${(await pm.get(server.pid)) !== undefined}`)

  step('An interactive shell on a terminal: type into it, interrupt its job, read its screen')
  const term = await pm.createTerminal({ command: ['/bin/sh'], cols: 48, rows: 8, env: { PS1: '$ ' } })
  await term.waitForLog(/\$ $/)
  await term.write('echo "on a terminal: $(tty)"; stty size\r')
  await term.waitForLog(/8 48/)
  await term.write('sleep 100\r')
  await new Promise((r) => setTimeout(r, 300))
  console.log(`  interrupt() → ${await term.interrupt()} (SIGINT to the foreground job; the shell lives on)`)
  await term.write('echo "still here: $((6 * 7))"\r')
  await term.waitForLog(/still here: 42/)
  const snap = await term.getSnapshot()
  console.log(`  getSnapshot(): ${snap.cols}×${snap.rows}, cursor at row ${snap.cursor.row}, col ${snap.cursor.col}`)
  console.log(`  ┌${'─'.repeat(snap.cols)}┐`)
  for (const line of snap.lines) console.log(`  │${line.padEnd(snap.cols)}│`)
  console.log(`  └${'─'.repeat(snap.cols)}┘`)
  console.log(`  terminate() → ${JSON.stringify(await term.terminate())}`)

  step('Bad input gets a typed error')
  try {
    await pm.spawn('true', { cwd: 'does/not/exist' })
  } catch (e) {
    console.log(`  ${e instanceof InvalidProcessCwdError ? 'InvalidProcessCwdError' : e.name} [${e.code}]: ${e.message}`)
  }

  await pm.close()
  console.log(`\n${bold('done')} — every process is gone (close() waited for each group).`)
}

main().catch((e) => {
  console.error(e)
  process.exit(1)
})
