'use strict'
// The commands of `procvisor` that ask a sandbox something or tell it to do something: ls, ps,
// logs, kill, stop, destroy. Each returns the exit status; what it prints goes to `out`/`err`.

const { binding } = require('../native/native')
const errors = require('../native/errors')
const { processView } = require('../persistent/client/port')
const { CliError, DeadlineError, allSandboxes, openSandbox, processOf, terminalOf } = require('./sandboxes')
const { table, when, duration, size, waitWritable } = require('./print')
const { eventText, Stamper } = require('./log-lines')

/** What `ls --json` prints for one sandbox (the JS API's names). */
async function sandboxInfo(conn) {
  const s = conn.sandbox
  const processes = await conn.call('list')
  const terminals = await conn.call('terminalList')
  return {
    id: s.id,
    workingDirectory: s.workingDirectory,
    supervisorPid: s.pid,
    startedAt: new Date(s.startedAt).toISOString(),
    // null: no lifetime, it runs until it is stopped.
    expiresAt: s.expiresAt === null ? null : new Date(s.expiresAt).toISOString(),
    processes: processes.length,
    terminals: terminals.length,
  }
}

async function ls(args, io) {
  const conns = await allSandboxes((why) => io.err.write(`procvisor: skipped ${why}\n`))
  let status = 0
  try {
    const infos = []
    for (const conn of conns) {
      try {
        infos.push(await sandboxInfo(conn))
      } catch (e) {
        // One that ended while it was listed (its lifetime, a stop) is no longer running: left out.
        if (e instanceof errors.SandboxSupervisorLostError) continue
        // The others are listed; the exit status says that one did not answer, or answered an
        // error (a supervisor of another build, a broken one).
        io.err.write(`procvisor: skipped ${e instanceof DeadlineError ? e.message : `sandbox ${conn.sandbox.id}: ${e.message}`}\n`)
        status = 1
      }
    }
    if (args.json) {
      io.out.write(`${JSON.stringify(infos, null, 2)}\n`)
    } else if (infos.length === 0) {
      io.out.write('no persistent sandboxes are running\n')
    } else {
      const rows = infos.map((i) => [i.id, String(i.supervisorPid), when(i.startedAt), i.expiresAt === null ? 'never' : when(i.expiresAt), String(i.processes), String(i.terminals), i.workingDirectory])
      io.out.write(table(['ID', 'SUPERVISOR', 'STARTED', 'EXPIRES', 'PROCESSES', 'TERMINALS', 'WORKING DIRECTORY'], rows))
    }
  } finally {
    for (const conn of conns) conn.close()
  }
  return status
}

/** One process as `ps --json` prints it: the Mastra face's pid, its state and its exit. */
async function processRow(conn, listed) {
  const status = await processView(conn, listed.pid).status()
  const row = { pid: listed.pid, ...(listed.name !== undefined && { name: listed.name }), state: status.state, command: listed.command, startedAt: status.startedAt }
  if (status.cpuTimeMs !== undefined) row.cpuTimeMs = status.cpuTimeMs
  // Probes' verdicts, where the process has them.
  if (status.ready !== undefined) row.ready = status.ready
  if (status.healthy !== undefined) row.healthy = status.healthy
  if (status.state !== 'exited') {
    row.uptimeMs = Math.max(0, Date.now() - Date.parse(status.startedAt))
    // As ps(1) reckons it: the CPU time over the time it has been running.
    if (status.cpuTimeMs !== undefined) row.cpuPercent = Math.round((1000 * status.cpuTimeMs) / Math.max(1, row.uptimeMs)) / 10
    if (status.memoryBytes !== undefined) row.memoryBytes = status.memoryBytes
  }
  // A service (started with `restart`): the runs so far, and whether it gave up.
  if (status.restarts !== undefined) row.restarts = status.restarts
  if (status.gaveUp) row.gaveUp = true
  if (listed.exitCode !== undefined) row.exitCode = listed.exitCode
  else if (status.state === 'exited') row.exitCode = status.exit.code ?? null
  return row
}

/** The READY column: the readiness verdict, and "unhealthy" when liveness failed; "-" without probes. */
function probeText(p) {
  const words = []
  if (p.ready !== undefined) words.push(p.ready ? 'ready' : 'not ready')
  if (p.healthy === false) words.push('unhealthy')
  return words.length > 0 ? words.join(', ') : '-'
}

async function ps(args, io) {
  const conn = await openSandbox(args.sandbox)
  try {
    const processes = []
    for (const listed of await conn.call('list')) processes.push(await processRow(conn, listed))
    const terminals = []
    for (const t of await conn.call('terminalList')) terminals.push({ id: t.id, pid: t.pid, state: (await (await terminalOf(conn, t.id)).status()).state })
    if (args.json) {
      io.out.write(`${JSON.stringify({ id: conn.sandbox.id, processes, terminals }, null, 2)}\n`)
    } else if (processes.length === 0 && terminals.length === 0) {
      io.out.write(`sandbox ${conn.sandbox.id} has no processes or terminals\n`)
    } else {
      const rows = processes.map((p) => [
        p.pid,
        p.name ?? '-',
        p.restarts ? `${p.state} (${p.restarts} ${p.restarts === 1 ? 'restart' : 'restarts'})` : p.state,
        probeText(p),
        when(p.startedAt),
        p.cpuTimeMs === undefined ? '-' : `${(p.cpuTimeMs / 1000).toFixed(2)}s`,
        p.cpuPercent === undefined ? '-' : `${p.cpuPercent.toFixed(1)}%`,
        size(p.memoryBytes),
        duration(p.uptimeMs),
        p.exitCode === undefined ? '-' : String(p.exitCode),
        p.command,
      ])
      if (rows.length > 0) io.out.write(table(['PID', 'NAME', 'STATE', 'READY', 'STARTED', 'CPU', 'CPU%', 'MEM', 'UPTIME', 'EXIT', 'COMMAND'], rows))
      if (terminals.length > 0) io.out.write(`${rows.length > 0 ? '\n' : ''}${table(['TERMINAL', 'PID', 'STATE'], terminals.map((t) => [t.id, String(t.pid), t.state]))}`)
    }
  } finally {
    conn.close()
  }
  return 0
}

/**
 * Every process's output, each line prefixed with the process (its name, else its pid), in the
 * order the lines come; a line is written whole, so two processes never mix within one. Restarts
 * and probe verdicts are lines of their own on stderr.
 */
async function logsAll(args, io) {
  const conn = await openSandbox(args.sandbox)
  const controller = new AbortController()
  const onInt = () => controller.abort()
  process.once('SIGINT', onInt)
  const hold = conn.hold()
  try {
    const listed = await conn.call('list')
    const label = (p) => String(p.name ?? p.pid)
    const width = Math.max(0, ...listed.map((p) => label(p).length))
    const follow = async (p) => {
      const prefix = Buffer.from(`${label(p).padEnd(width)} | `)
      const partial = { stdout: Buffer.alloc(0), stderr: Buffer.alloc(0) }
      // The time of the event a line began in, for --timestamps.
      const began = { stdout: '', stderr: '' }
      const put = (type, line, at) => waitWritable(type === 'stdout' ? io.out : io.err, Buffer.concat([prefix, Buffer.from(args.timestamps ? `${at} ` : ''), line]))
      const stream = await processView(conn, p.pid).logs({ follow: args.follow, signal: controller.signal })
      try {
        for await (const e of stream) {
          const text = eventText(e)
          if (text !== null) await put('stderr', Buffer.from(`${text}\n`), e.timestamp)
          if ((e.type !== 'stdout' && e.type !== 'stderr') || !args.streams.has(e.type)) continue
          if (partial[e.type].length === 0) began[e.type] = e.timestamp
          let rest = Buffer.concat([partial[e.type], Buffer.from(e.data)])
          for (let nl = rest.indexOf(10); nl >= 0; nl = rest.indexOf(10)) {
            await put(e.type, rest.subarray(0, nl + 1), began[e.type])
            rest = rest.subarray(nl + 1)
            began[e.type] = e.timestamp
          }
          partial[e.type] = rest
        }
      } catch (e) {
        if (!(e instanceof errors.ProcessAbortedError)) throw e
      }
      // What a process wrote after its last newline is a line too.
      for (const type of ['stdout', 'stderr']) if (partial[type].length > 0) await put(type, Buffer.concat([partial[type], Buffer.from('\n')]), began[type])
    }
    await Promise.all(listed.map(follow))
  } finally {
    hold()
    process.removeListener('SIGINT', onInt)
    conn.close()
  }
  return 0
}

async function logs(args, io) {
  if (args.pid === undefined) return logsAll(args, io)
  const conn = await openSandbox(args.sandbox)
  let cursor = args.since
  const controller = new AbortController()
  const onInt = () => controller.abort()
  process.once('SIGINT', onInt)
  try {
    const view = await processOf(conn, args.pid)
    let stream
    try {
      stream = await view.logs({ since: args.since, follow: args.follow, signal: controller.signal })
    } catch (e) {
      if (e instanceof errors.InvalidProcessCursorError) throw new CliError(`--since: ${e.message}`)
      throw e
    }
    const hold = conn.hold()
    const stamper = new Stamper()
    try {
      for await (const e of stream) {
        if (e.cursor !== undefined) cursor = e.cursor
        const text = eventText(e)
        if (text !== null) await waitWritable(io.err, Buffer.from(`${args.timestamps ? `${e.timestamp} ` : ''}${text}\n`))
        if ((e.type !== 'stdout' && e.type !== 'stderr') || !args.streams.has(e.type)) continue
        await waitWritable(e.type === 'stdout' ? io.out : io.err, args.timestamps ? stamper.stamp(e) : e.data)
      }
    } catch (e) {
      if (!(e instanceof errors.ProcessAbortedError)) throw e
    } finally {
      hold()
    }
  } finally {
    process.removeListener('SIGINT', onInt)
    conn.close()
  }
  // A later `logs --since` goes on from here, without a gap or a repeat.
  if (cursor !== undefined) io.err.write(`cursor: ${cursor}\n`)
  return 0
}

async function kill(args, io) {
  const conn = await openSandbox(args.sandbox)
  try {
    await processOf(conn, args.pid)
    const sent = await conn.call('kill', { pid: String(args.pid), signal: args.signal })
    io.out.write(sent === false ? `process ${args.pid} had already exited\n` : `sent ${typeof args.signal === 'number' ? `signal ${args.signal}` : args.signal ?? 'SIGTERM'} to process ${args.pid}\n`)
  } finally {
    conn.close()
  }
  return 0
}

/** Ends the supervisor and its processes; what is left of the sandbox is its config. */
async function shutdown(conn, io, verb) {
  const progress = io.err.isTTY ? (text) => io.err.write(`${text}\n`) : () => {}
  const s = conn.sandbox
  progress(`${verb} sandbox ${s.id}: ending its processes and its supervisor (pid ${s.pid})…`)
  try {
    await conn.call('shutdown')
  } catch (e) {
    // Its end closes the connection, sometimes before the reply is read.
    if (!(e instanceof errors.SandboxSupervisorLostError)) throw e
  }
  conn.close()
  return progress
}

async function stop(args, io) {
  const conn = await openSandbox(args.sandbox)
  const s = conn.sandbox
  const progress = await shutdown(conn, io, 'stopping')
  if (s.snapshot) {
    // As the sandbox's own stop() does with snapshotOnStop: after the kill, nothing is writing.
    progress(`capturing ${s.workingDirectory} as checkpoint ${s.snapshot.checkpointName}…`)
    const report = await binding.captureCheckpoint(s.workingDirectory, s.snapshot.checkpointsDirectory, s.snapshot.checkpointName, s.id)
    progress(`captured ${report.files} files (${report.bytes} bytes) in ${report.durationMs} ms`)
  }
  io.out.write(`stopped sandbox ${s.id}\n`)
  return 0
}

module.exports = { ls, ps, logs, kill, stop, processRow, shutdown }
