'use strict'
// The tools an agent uses on the sandbox's background processes (the ones Mastra's
// execute_command starts with background: true): wait for a port or a log line, read the log in
// bounded pieces that resume where the last stopped, and list what runs.

const { StringDecoder } = require('node:string_decoder')
const { bounded, clip, failure } = require('./common.js')
const errors = require('../../lib/native/errors.js')
const { linearPattern } = require('../../lib/process/pattern.js')
const { validName } = require('../../lib/process/names.js')

const { codes } = errors

/** The stderr tail a failed wait returns: enough to see why a server died, small for a model. */
const TAIL_CHARS = 2000

/** The process of the sandbox with this pid or name, without Mastra's forget-after-exit read (`processes.get`). */
async function processOf(sandbox, pid) {
  await sandbox.ensureRunning()
  const pm = sandbox.processes
  const key = String(pid).trim()
  const found = /^\d+$/.test(key) || validName(key) ? await sandbox._backend.get(pm, key) : undefined
  const handle = found && !pm._dismissed?.has(found.pid) ? found : undefined
  if (!handle) {
    throw new errors.ProcessNotFoundError(`no process ${/^\d+$/.test(key) ? 'with pid' : 'named'} ${key} in this sandbox (it never ran here, or it was killed and forgotten); list_processes lists the ones there are`)
  }
  return handle
}

/** What a wait returns when the process ended first: its exit and why, from its stderr. */
/** What a wait says when it was not satisfied: how the process ended, or why it gave up. */
function waitEnd(z) {
  return {
    exitCode: z.number().nullable().optional(),
    signal: z.number().optional(),
    stderrTail: z.string().optional(),
    message: z.string().optional(),
  }
}

function ended(e) {
  const out = { exitCode: e.exitCode ?? null }
  if (e.signal !== undefined) out.signal = e.signal
  out.stderrTail = clip(e.stderrTail ?? '', TAIL_CHARS, 'tail')
  return out
}

/**
 * A `/source/flags` pattern is a regular expression, matched in linear time (a model's pattern
 * must not be able to hold the event loop); anything else is text to find as written.
 */
function patternOf(text) {
  const m = /^\/(.+)\/([dgimsuvy]*)$/s.exec(text)
  if (!m) return text
  try {
    return linearPattern(m[1], m[2])
  } catch (e) {
    throw errors.invalidOption(`pattern ${text} cannot be used: ${e.message}`)
  }
}

/** The whole line of `text` around the first match of `pattern`. */
function lineOf(text, pattern, match) {
  let at = typeof pattern === 'string' ? text.indexOf(pattern) : (pattern.find(text)?.index ?? -1)
  if (at < 0) at = text.lastIndexOf(match)
  if (at < 0) return match
  const start = text.lastIndexOf('\n', at) + 1
  const end = text.indexOf('\n', at)
  return clip(text.slice(start, end < 0 ? undefined : end).replace(/\r$/, ''), 1000, 'head')
}

function processTools(ctx) {
  const { z, tool, options } = ctx
  const pid = z.string().describe('The PID of a process in the sandbox (execute_command with background: true prints it), or the name it was spawned with (list_processes shows both)')

  const waitForPort = tool('wait_for_port', {
    description:
      'Wait until a background process listens on a port (tcp: accepts connections; http: GET path answers 2xx/3xx). ' +
      'Returns ready and how long it took. If the process exits first, returns its exit code and the end of its stderr, which usually says why.',
    inputSchema: z.object({
      pid,
      port: z.number().int().min(1).max(65535).describe('The port, on localhost'),
      mode: z.enum(['tcp', 'http']).optional().describe("'tcp' (default) or 'http'"),
      path: z.string().optional().describe("HTTP path for mode 'http', default '/'"),
      timeoutMs: z.number().int().min(0).optional().describe(`Give up after this many milliseconds (default ${options.timeoutMs})`),
    }),
    outputSchema: z.object({
      ready: z.boolean(),
      ms: z.number(),
      ...waitEnd(z),
    }),
    async execute(input, sandbox) {
      const handle = await processOf(sandbox, input.pid)
      const timeout = bounded(input.timeoutMs, options)
      const started = Date.now()
      try {
        await handle.nativeHandle.waitForPort(input.port, { mode: input.mode, path: input.path, timeout })
        return { ready: true, ms: Date.now() - started }
      } catch (e) {
        const ms = Date.now() - started
        if (e?.code === codes.PROCESS_EXITED_BEFORE_READY) {
          return { ready: false, ms, ...ended(e), message: `process ${input.pid} ended before port ${input.port} was ready` }
        }
        if (e?.code === codes.PROCESS_READY_TIMEOUT) {
          return { ready: false, ms, message: e.message }
        }
        throw failure(e)
      }
    },
  })

  const waitForLog = tool('wait_for_log', {
    description:
      "Wait until a background process prints a line matching pattern (text to find as written, or /regex/flags). Returns the matched line and a cursor that read_logs' since resumes after. " +
      'If the process exits first, returns its exit code and the end of its stderr.',
    inputSchema: z.object({
      pid,
      pattern: z.string().min(1).describe('Text to find, or /regex/flags'),
      stream: z.enum(['stdout', 'stderr', 'both']).optional().describe("Which output to search, default 'both'"),
      timeoutMs: z.number().int().min(0).optional().describe(`Give up after this many milliseconds (default ${options.timeoutMs})`),
    }),
    outputSchema: z.object({
      matched: z.boolean(),
      line: z.string().nullable(),
      cursor: z.string().nullable(),
      ...waitEnd(z),
    }),
    async execute(input, sandbox) {
      const handle = await processOf(sandbox, input.pid)
      const pattern = patternOf(input.pattern)
      const timeout = bounded(input.timeoutMs, options)
      try {
        const r = await handle.nativeHandle.waitForLog(pattern, { stream: input.stream, timeout })
        return { matched: true, line: lineOf(r.text, pattern, r.match), cursor: r.cursor ?? null }
      } catch (e) {
        if (e?.code === codes.PROCESS_EXITED_BEFORE_LOG) {
          return { matched: false, line: null, cursor: null, ...ended(e), message: `process ${input.pid} ended before its output matched ${input.pattern}` }
        }
        if (e?.code === codes.PROCESS_WAIT_TIMEOUT) {
          return { matched: false, line: null, cursor: null, message: `no output matched ${input.pattern} within ${timeout} ms; the process is still running` }
        }
        throw failure(e)
      }
    },
  })

  const readLogs = tool('read_logs', {
    description:
      `Read a background process's output (stdout and stderr interleaved as read; each stream in its own order) from a cursor: without since, from the start. At most maxBytes (default ${options.maxLogBytes}) per call; ` +
      'truncated says more is left, and calling again with since set to the returned cursor goes on exactly where this stopped. Also says whether the process has exited, and its exit code.',
    inputSchema: z.object({
      pid,
      since: z.string().optional().describe('A cursor from read_logs or wait_for_log: read what came after it'),
      maxBytes: z.number().int().min(256).max(1048576).optional().describe(`Most bytes of text to return (default ${options.maxLogBytes})`),
    }),
    outputSchema: z.object({
      text: z.string(),
      cursor: z.string().nullable(),
      truncated: z.boolean(),
      note: z.string().optional(),
      exited: z.boolean(),
      exitCode: z.number().optional(),
    }),
    async execute(input, sandbox) {
      const handle = await processOf(sandbox, input.pid)
      const max = input.maxBytes ?? options.maxLogBytes
      let stream
      try {
        stream = await handle.nativeHandle.logs(input.since === undefined ? {} : { since: input.since })
      } catch (e) {
        if (e?.code === codes.INVALID_PROCESS_CURSOR) throw new errors.InvalidProcessCursorError(`since is not a cursor of process ${input.pid}: ${e.message}`, { cause: e })
        throw failure(e)
      }
      const reader = stream.getReader()
      const decoder = new StringDecoder('utf8')
      let text = ''
      let bytes = 0
      let cursor = input.since ?? null
      let left = false
      let lost = false
      try {
        for (;;) {
          const { value, done } = await reader.read()
          if (done) break
          if (value.type === 'truncated') {
            lost = true
            continue
          }
          if (value.type !== 'stdout' && value.type !== 'stderr') continue
          const data = Buffer.from(value.data)
          if (bytes + data.length > max) {
            left = true
            // One piece larger than the whole budget: its start is returned, and the rest is
            // skipped (the cursor moves past it) rather than asked for again forever.
            if (bytes === 0) {
              text += decoder.write(data.subarray(0, max))
              cursor = value.cursor
              lost = true
            }
            break
          }
          text += decoder.write(data)
          bytes += data.length
          cursor = value.cursor
        }
      } finally {
        reader.cancel().catch(() => {})
      }
      text += decoder.end()
      const notes = []
      if (lost) notes.push('some output was left out (more than the log keeps, or one piece larger than maxBytes)')
      if (left) notes.push('more output follows: call again with since set to this cursor')
      const exited = handle.exitCode !== undefined
      return { text, cursor, truncated: left || lost, ...(notes.length && { note: notes.join('; ') }), exited, ...(exited && { exitCode: handle.exitCode }) }
    },
  })

  const listProcesses = tool('list_processes', {
    description: "List the sandbox's background processes and terminals: pid (or terminalId), command, state, exit code, start time and CPU time where measured.",
    inputSchema: z.object({}),
    outputSchema: z.object({
      processes: z.array(
        z.object({
          pid: z.string(),
          name: z.string().optional(),
          command: z.string().optional(),
          state: z.enum(['running', 'exited']),
          exitCode: z.number().optional(),
          startedAt: z.string().optional(),
          cpuTimeMs: z.number().optional(),
        }),
      ),
      terminals: z.array(z.object({ terminalId: z.string(), command: z.array(z.string()), state: z.enum(['running', 'exited']), exitCode: z.number().nullable().optional() })),
    }),
    async execute(input, sandbox) {
      await sandbox.ensureRunning()
      const processes = []
      for (const p of await sandbox.processes.list()) {
        const entry = { pid: String(p.pid), ...(p.name !== undefined && { name: p.name }), command: p.command, state: p.running ? 'running' : 'exited', ...(p.exitCode !== undefined && { exitCode: p.exitCode }) }
        const handle = await sandbox._backend.get(sandbox.processes, String(p.pid)).catch(() => undefined)
        const status = await handle?.nativeHandle?.status().catch(() => undefined)
        if (status?.startedAt) entry.startedAt = status.startedAt
        if (status?.cpuTimeMs !== undefined) entry.cpuTimeMs = status.cpuTimeMs
        processes.push(entry)
      }
      const terminals = []
      for (const t of await sandbox.terminals.list()) {
        const s = await t.status()
        terminals.push({ terminalId: t.id, command: [...s.command], state: s.state, ...(s.state === 'exited' && { exitCode: s.exit?.code ?? null }) })
      }
      return { processes, terminals }
    },
  })

  return [waitForPort, waitForLog, readLogs, listProcesses]
}

module.exports = { processTools }
