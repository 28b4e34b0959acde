'use strict'
// The commands of `procvisor` that start and steer a sandbox's services: start, restart,
// describe. Each returns the exit status; what it prints goes to `out`/`err`.

const net = require('node:net')
const path = require('node:path')
const { CliError, openSandbox, processOf } = require('./sandboxes')
const { table, when, duration, size } = require('./print')

/** Between two looks at a port that is not open yet. */
const PORT_POLL_MS = 100
/** A dot on the terminal this often while the port is waited for. */
const DOT_MS = 500

/** A word of the shell, quoted only when it needs to be: the command as a person would type it. */
function shellWord(word) {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`
}

/** Whether something accepts a connection on 127.0.0.1:`port`, now. */
function portOpen(port) {
  return new Promise((resolve) => {
    const socket = net.connect({ host: '127.0.0.1', port })
    const done = (open) => {
      socket.destroy()
      resolve(open)
    }
    socket.once('connect', () => done(true))
    socket.once('error', () => done(false))
    socket.setTimeout(1000, () => done(false))
  })
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

/**
 * Waits until `port` accepts connections while the process runs. A process that exits first,
 * or a port still closed at the deadline, is an error: the command was asked to say "it serves".
 */
async function waitForPort(view, pid, port, ms, io) {
  const until = Date.now() + ms
  const dots = io.err.isTTY
  let dotAt = Date.now() + DOT_MS
  if (dots) io.err.write(`waiting for port ${port}`)
  const line = (text) => (dots ? `\n${text}` : text)
  try {
    for (;;) {
      if (await portOpen(port)) return
      const status = await view.status()
      if (status.state === 'exited') {
        const how = status.exit.signal ? `signal ${status.exit.signal}` : `code ${status.exit.code}`
        throw new CliError(line(`process ${pid} exited (${how}) before port ${port} accepted a connection (procvisor logs ${pid} says why)`))
      }
      if (Date.now() >= until) throw new CliError(line(`port ${port} did not accept a connection within ${ms} ms; process ${pid} runs on`))
      if (dots && Date.now() >= dotAt) {
        io.err.write('.')
        dotAt += DOT_MS
      }
      await sleep(PORT_POLL_MS)
    }
  } finally {
    if (dots) io.err.write('\n')
  }
}

async function start(args, io) {
  const conn = await openSandbox(args.sandbox)
  try {
    const argv = args.argv
    const spawn = {
      command: argv.map(shellWord).join(' '),
      argv,
      // Relative to where the command line runs, as a spawn's cwd is to its Node process.
      cwd: args.cwd === undefined ? undefined : path.resolve(args.cwd),
      env: args.env,
      pty: args.pty || undefined,
      name: args.name,
      restart: args.restart === undefined ? undefined : { policy: args.restart },
    }
    const answer = await conn.call('spawn', spawn)
    const pid = String(answer.pid)
    // The spawn made this connection a reader of its output; nobody reads it here.
    await conn.call('unsubscribe', { pid })
    const view = await processOf(conn, pid)
    if (args.readyPort !== undefined) await waitForPort(view, pid, args.readyPort, args.readyTimeout, io)
    if (args.json) {
      const out = { pid, command: answer.command }
      if (answer.name !== undefined) out.name = answer.name
      if (args.readyPort !== undefined) out.ready = true
      io.out.write(`${JSON.stringify(out)}\n`)
    } else {
      io.out.write(`${pid}\n`)
    }
  } finally {
    conn.close()
  }
  return 0
}

async function restart(args, io) {
  const conn = await openSandbox(args.sandbox)
  try {
    const view = await processOf(conn, args.pid)
    const status = await view.restart()
    if (status.state === 'exited') throw new CliError(`process ${args.pid} ended instead of running again (procvisor describe ${args.sandbox} ${args.pid})`)
    io.out.write(`restarted process ${args.pid}: its run now is pid ${status.pid} (${status.restarts} ${status.restarts === 1 ? 'restart' : 'restarts'})\n`)
  } finally {
    conn.close()
  }
  return 0
}

/** A probe as it was given: its target and what it saw last. */
function probeText(probe, verdict) {
  if (!probe) return undefined
  const target = Object.keys(probe).find((k) => ['port', 'http', 'log', 'exec'].includes(k))
  const value = probe[target]
  const shown = target === 'http' ? `http :${value.port}${value.path ?? '/'}` : target === 'exec' ? `exec ${value.join(' ')}` : `${target} ${value}`
  return `${shown}: ${verdict === undefined ? '-' : verdict}`
}

async function describe(args, io) {
  const conn = await openSandbox(args.sandbox)
  let d
  try {
    await processOf(conn, args.pid)
    d = await conn.call('describe', { pid: String(args.pid) })
  } finally {
    conn.close()
  }
  const st = d.status
  const out = {
    pid: d.pid,
    command: st.command,
    cwd: st.cwd,
    env: d.env,
    state: st.state,
    startedAt: st.startedAt,
    uptimeMs: st.state === 'exited' ? undefined : Math.max(0, Date.now() - Date.parse(st.startedAt)),
    restart: d.restart ?? null,
    restarts: st.restarts,
    lastExit: st.lastExit,
    exit: st.exit,
    readiness: d.readiness ? { ...d.readiness, ready: st.ready } : undefined,
    liveness: d.liveness ? { ...d.liveness, healthy: st.healthy } : undefined,
    cpuTimeMs: st.cpuTimeMs,
    memoryBytes: st.memoryBytes,
    memoryPeakBytes: st.memoryPeakBytes,
  }
  if (st.pid !== undefined && String(st.pid) !== String(d.pid)) out.runPid = st.pid
  if (args.json) {
    io.out.write(`${JSON.stringify(out, null, 2)}\n`)
    return 0
  }
  const exitText = (e) => (e ? (e.signal ? `signal ${e.signal}` : `code ${e.code}`) : '-')
  const rows = [
    ['pid', String(out.pid) + (out.runPid ? ` (current run ${out.runPid})` : '')],
    ['command', out.command.map(shellWord).join(' ')],
    ['cwd', out.cwd],
    ['env', out.env.join(' ') || '-'],
    ['state', out.state],
    ['started', when(out.startedAt)],
    ['uptime', duration(out.uptimeMs)],
    ['restart', out.restart ? out.restart.policy : 'none'],
    ['restarts', out.restarts === undefined ? '-' : String(out.restarts)],
    ['last exit', exitText(out.lastExit ?? out.exit)],
    ['readiness', probeText(d.readiness, st.ready) ?? '-'],
    ['liveness', probeText(d.liveness, st.healthy) ?? '-'],
    ['cpu', out.cpuTimeMs === undefined ? '-' : `${(out.cpuTimeMs / 1000).toFixed(2)}s`],
    ['memory', size(out.memoryBytes)],
    ['memory peak', size(out.memoryPeakBytes)],
  ]
  io.out.write(table(['FIELD', 'VALUE'], rows).split('\n').slice(1).join('\n'))
  return 0
}

module.exports = { start, restart, describe, shellWord }
