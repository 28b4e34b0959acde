'use strict'
// `procvisor attach`: this terminal becomes the terminal of a sandbox's program. Raw mode, so
// every key goes to the program as typed; the window size is set at attach and followed; Ctrl-]
// detaches and leaves the program running, as telnet's escape and `docker attach`'s do.

const errors = require('../native/errors')
const { CliError, openSandbox, processOf } = require('./sandboxes')

/** Ctrl-]: the byte that detaches (never sent to the program). */
const DETACH = 0x1d

/**
 * Attaches to process `terminal` (a pid) of the sandbox, which must run on a pseudo-terminal
 * (`pty`). Its retained output is replayed first, so the screen shows what the program drew,
 * then its output follows as it comes.
 */
async function attach(args, io, input = process.stdin) {
  if (!/^[1-9][0-9]*$/.test(args.terminal)) throw new CliError(`<terminal> must be the pid of a process started with pty, not ${JSON.stringify(args.terminal)}`)
  const conn = await openSandbox(args.sandbox)
  const view = await processOf(conn, args.terminal)
  const out = io.out
  const size = () => [out.columns || 80, out.rows || 24]
  try {
    await view.resize(...size())
  } catch (e) {
    conn.close()
    if (e instanceof errors.ProcessNoTerminalError) throw new CliError(`process ${args.terminal} has no terminal (it was started without pty)`)
    throw e
  }
  const controller = new AbortController()
  const stream = await view.logs({ follow: true, signal: controller.signal })
  const hold = conn.hold()
  const raw = input.isTTY && typeof input.setRawMode === 'function'
  if (raw) input.setRawMode(true)
  let detached = false
  const onResize = () => view.resize(...size()).catch(() => {})
  const onInput = (chunk) => {
    const at = chunk.indexOf(DETACH)
    const typed = at < 0 ? chunk : chunk.subarray(0, at)
    if (typed.length > 0) view.sendStdin(typed).catch(() => {})
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
  if (detached) io.err.write(`\r\n[detached from process ${args.terminal} of sandbox ${args.sandbox}; it runs on]\r\n`)
  else io.err.write(`\r\n[process ${args.terminal} exited${exit ? ` with ${exit.signal ? `signal ${exit.signal}` : `code ${exit.code}`}` : ''}]\r\n`)
  return 0
}

module.exports = { attach }
