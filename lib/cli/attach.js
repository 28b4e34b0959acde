'use strict'
// `procvisor attach`: this terminal becomes the terminal of a sandbox's program. Raw mode, so
// every key goes to the program as typed; the window size is set at attach and followed; Ctrl-]
// detaches and leaves the program running, as telnet's escape and `docker attach`'s do.

const errors = require('../native/errors')
const { CliError, openSandbox, processOf, terminalOf } = require('./sandboxes')

/** Ctrl-]: the byte that detaches (never sent to the program). */
/** Typed bytes in flight past which input is paused. */
const TYPING_HIGH_WATER = 1024 * 1024
const DETACH = 0x1d

/**
 * What is attached to, whichever it is: a terminal of the sandbox (by its id), or a process of
 * it started with `pty` (by its pid). `send` types, `resize` sets the window, `stream` follows
 * the output from the oldest byte the log still holds.
 */
async function targetOf(conn, name) {
  // A terminal's id first: a process's name is the other thing a word may be.
  const isTerminal = !/^[1-9][0-9]*$/.test(name) && (await conn.call('terminalGet', { id: name })) !== null
  if (!isTerminal) {
    const view = await processOf(conn, name)
    return { what: `process ${name}`, send: (b) => view.sendStdin(b), resize: (c, r) => view.resize(c, r), stream: (o) => view.logs(o) }
  }
  const t = await terminalOf(conn, name)
  return { what: `terminal ${name}`, send: (b) => t.write(b), resize: (c, r) => t.resize(c, r), stream: (o) => t.output(o) }
}

/**
 * Attaches to `terminal` of the sandbox: one of its terminals, or a process started with `pty`.
 * Its retained output is replayed first, so the screen shows what the program drew, then its
 * output follows as it comes.
 */
async function attach(args, io, input = process.stdin) {
  const conn = await openSandbox(args.sandbox)
  let view
  try {
    view = await targetOf(conn, args.terminal)
  } catch (e) {
    conn.close()
    throw e
  }
  const out = io.out
  const size = () => [out.columns || 80, out.rows || 24]
  try {
    await view.resize(...size())
  } catch (e) {
    conn.close()
    if (e instanceof errors.ProcessNoTerminalError) throw new CliError(`${view.what} has no terminal (it was started without pty)`)
    throw e
  }
  const controller = new AbortController()
  const stream = await view.stream({ follow: true, signal: controller.signal })
  const hold = conn.hold()
  const raw = input.isTTY && typeof input.setRawMode === 'function'
  if (raw) input.setRawMode(true)
  let detached = false
  const onResize = () => view.resize(...size()).catch(() => {})
  // What is typed and not yet taken by the program: past a bound, this terminal is read no
  // further until it is (a paste into a program that reads nothing waits, rather than be
  // refused past the stdin backlog and lost).
  let pending = 0
  const onInput = (chunk) => {
    const at = chunk.indexOf(DETACH)
    const typed = at < 0 ? chunk : chunk.subarray(0, at)
    if (typed.length > 0) {
      pending += typed.length
      if (pending > TYPING_HIGH_WATER) input.pause()
      const settled = () => {
        pending -= typed.length
        if (pending <= TYPING_HIGH_WATER && !detached) input.resume()
      }
      view.send(typed).then(settled, settled)
    }
    if (at >= 0) {
      detached = true
      controller.abort()
    }
  }
  out.on('resize', onResize)
  input.on('data', onInput)
  input.resume()
  let exit
  try {
    for await (const e of stream) {
      if (e.type === 'stdout' || e.type === 'stderr') out.write(e.data)
      else if (e.type === 'terminal') exit = e.exit
    }
  } catch (e) {
    if (!(e instanceof errors.ProcessAbortedError)) throw e
  } finally {
    out.removeListener('resize', onResize)
    input.removeListener('data', onInput)
    if (raw) input.setRawMode(false)
    input.pause()
    hold()
    conn.close()
  }
  if (detached) io.err.write(`\r\n[detached from ${view.what} of sandbox ${args.sandbox}; it runs on]\r\n`)
  else io.err.write(`\r\n[${view.what} exited${exit ? ` with ${exit.signal ? `signal ${exit.signal}` : `code ${exit.code}`}` : ''}]\r\n`)
  return 0
}

module.exports = { attach }
