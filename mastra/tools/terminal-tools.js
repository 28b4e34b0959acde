'use strict'
// The tools an agent uses to drive interactive programs on the sandbox's terminals: open one,
// type into it (text and named keys) and get the screen back once it shows what was waited for
// or has gone quiet, read it, close it.

const { StringDecoder } = require('node:string_decoder')
const errors = require('../../lib/native/errors.js')
const { bounded } = require('./common.js')
const { keystrokes, plainText, KEY_HELP } = require('./keys.js')

/** How often a write looks for new output while it waits. */
const POLL_MS = 50
/** The output after a write that is searched for `waitForText` (the latest, as the screen shows). */
const SEARCHED_CHARS = 64 * 1024

const sleep = (ms) => new Promise((r) => setTimeout(r, ms))

async function terminalOf(sandbox, id) {
  await sandbox.ensureRunning()
  const t = await sandbox.terminals.get(id)
  if (!t) throw new errors.ProcessNotFoundError(`no terminal ${id} in this sandbox (closed, or its sandbox was stopped); terminal_open starts one`)
  return t
}

/** The output of `t` after cursor `since` (from its start without one), and its exit if it ended. */
async function drain(t, since) {
  const reader = (await t.output(since ? { since } : {})).getReader()
  const decoder = new StringDecoder('utf8')
  let text = ''
  let cursor = since
  let exit
  try {
    for (;;) {
      const { value, done } = await reader.read()
      if (done) break
      cursor = value.cursor ?? cursor
      if (value.type === 'stdout' || value.type === 'stderr') text += decoder.write(Buffer.from(value.data))
      else if (value.type === 'terminal') exit = value.exit
    }
  } finally {
    reader.cancel().catch(() => {})
  }
  return { text: text + decoder.end(), cursor, exit }
}

/** The screen as the tools return it: its rows as text (blank rows at the bottom left out) and the cursor. */
async function screen(t) {
  const s = await t.getSnapshot()
  const lines = [...s.lines]
  while (lines.length > 0 && lines[lines.length - 1].trim() === '' && lines.length > s.cursor.row + 1) lines.pop()
  return { terminalId: t.id, lines, cursor: { row: s.cursor.row, col: s.cursor.col } }
}

function terminalTools(ctx) {
  const { z, tool, options } = ctx
  /** Terminal id → the cursor up to which the tools have read its output. */
  const cursors = new Map()

  /**
   * Waits after input: until the output since then shows `text` (escape sequences removed), or,
   * without one, until nothing new came for quietMs; at most `timeout`. Returns what it saw.
   */
  async function settle(t, since, { text, timeout }) {
    const started = Date.now()
    let last = started
    let raw = ''
    for (;;) {
      await sleep(POLL_MS)
      const r = await drain(t, since)
      since = r.cursor
      if (r.text) {
        raw = (raw + r.text).slice(-SEARCHED_CHARS)
        last = Date.now()
      }
      const now = Date.now()
      const out = { since, exit: r.exit }
      if (text !== undefined && plainText(raw).includes(text)) return { ...out, matched: true }
      if (r.exit) return { ...out, matched: text === undefined ? undefined : false }
      if (text === undefined && now - last >= options.quietMs) return out
      if (now - started >= timeout) return { ...out, matched: text === undefined ? undefined : false, timedOut: true }
    }
  }

  /** The screen, with how the wait ended where that is news. */
  async function answer(t, waited, waitForText, timeout) {
    const out = await screen(t)
    if (waited.matched !== undefined) out.matched = waited.matched
    if (waited.exit) {
      out.exited = true
      out.exitCode = waited.exit.code
    }
    if (waited.matched === false && !waited.exit) out.message = `the screen did not show ${JSON.stringify(waitForText)} within ${timeout} ms; this is what it shows`
    return out
  }

  const screenSchema = z.object({
    terminalId: z.string(),
    lines: z.array(z.string()),
    cursor: z.object({ row: z.number(), col: z.number() }),
    matched: z.boolean().optional(),
    exited: z.boolean().optional(),
    exitCode: z.number().optional(),
    message: z.string().optional(),
  })
  const terminalId = z.string().describe('The terminalId terminal_open returned')

  const open = tool('terminal_open', {
    description:
      "Open a terminal in the sandbox running command (default: the user's shell) for interactive programs: shells, REPLs (python3 -i, node), TUIs, prompts. " +
      'Returns its terminalId and the screen once the program has started and gone quiet (lines: one string per row; cursor: row and col, from 0).',
    inputSchema: z.object({
      command: z.string().optional().describe("A shell command line, e.g. 'python3 -i' (default: the user's shell)"),
      cols: z.number().int().min(20).max(500).optional().describe('Columns, default 80'),
      rows: z.number().int().min(5).max(200).optional().describe('Rows, default 24'),
      cwd: z.string().optional().describe("Working directory, relative to the sandbox's"),
    }),
    outputSchema: screenSchema,
    async execute(input, sandbox) {
      const t = await sandbox.terminals.create({ command: input.command, cols: input.cols, rows: input.rows, cwd: input.cwd })
      const waited = await settle(t, undefined, { timeout: Math.min(options.timeoutMs, 5000) })
      cursors.set(t.id, waited.since)
      return answer(t, waited)
    },
  })

  const write = tool('terminal_write', {
    description:
      `Type input into a terminal, then return its screen once it shows waitForText (in the output that follows, escape sequences removed; the echo of what was typed counts too, so wait for text the input does not contain, such as the next prompt) or, without waitForText, once it has gone quiet for ${options.quietMs} ms. ` +
      `${KEY_HELP} To interrupt a running program send {Ctrl-C}; to end input send {Ctrl-D}.`,
    inputSchema: z.object({
      terminalId,
      input: z.string().describe('Text and {Keys} to type, e.g. "ls -la{Enter}" or "{Ctrl-C}"'),
      waitForText: z.string().min(1).optional().describe("Return once the output after this input shows this text, e.g. the prompt '>>> '"),
      timeoutMs: z.number().int().min(0).optional().describe(`Most milliseconds to wait (default ${options.timeoutMs})`),
    }),
    outputSchema: screenSchema,
    async execute(input, sandbox) {
      const t = await terminalOf(sandbox, input.terminalId)
      // What came before this input is not what the wait looks for.
      const before = await drain(t, cursors.get(t.id))
      if (before.exit) {
        cursors.set(t.id, before.cursor)
        throw new errors.ProcessAlreadyExitedError(`the program on terminal ${t.id} has exited with code ${before.exit.code}; terminal_read shows its last screen, terminal_open starts another`)
      }
      // The timeout bounds the whole call, typing included: a program that reads nothing takes
      // a few KiB into its terminal and then no more.
      const timeout = bounded(input.timeoutMs, options)
      const deadline = Date.now() + timeout
      const writing = t.write(keystrokes(input.input))
      writing.catch(() => {})
      let timer
      const typed = await Promise.race([
        writing.then(() => true),
        new Promise((r) => (timer = setTimeout(r, timeout, false))),
      ]).finally(() => clearTimeout(timer))
      const left = typed ? Math.max(0, deadline - Date.now()) : 0
      const waited = await settle(t, before.cursor, { text: input.waitForText, timeout: left })
      cursors.set(t.id, waited.since)
      const out = await answer(t, waited, input.waitForText, timeout)
      if (!typed) {
        out.message = `the program did not take all of the input within ${timeout} ms (it is not reading it); the rest is still being typed, and {Ctrl-C} or terminal_close ends it. This is what the screen shows`
      }
      return out
    },
  })

  const read = tool('terminal_read', {
    description: 'Read what a terminal shows now: its screen (one string per row) and the cursor, and whether its program has exited.',
    inputSchema: z.object({ terminalId }),
    outputSchema: screenSchema,
    async execute(input, sandbox) {
      const t = await terminalOf(sandbox, input.terminalId)
      const status = await t.status()
      const out = await screen(t)
      return status.state === 'exited' ? { ...out, exited: true, exitCode: status.exit.code } : out
    },
  })

  const close = tool('terminal_close', {
    description: 'Close a terminal: its program and everything it started are killed.',
    inputSchema: z.object({ terminalId }),
    outputSchema: z.object({ terminalId: z.string(), closed: z.boolean(), exitCode: z.number() }),
    async execute(input, sandbox) {
      const t = await terminalOf(sandbox, input.terminalId)
      const status = await t.status()
      const exit = status.state === 'exited' ? status.exit : await t.terminate()
      cursors.delete(t.id)
      return { terminalId: t.id, closed: true, exitCode: exit.code }
    },
  })

  return [open, write, read, close]
}

module.exports = { terminalTools }
