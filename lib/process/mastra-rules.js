'use strict'
// Mastra's rules for one process, written once for every side that runs one: this Node process
// (procvisor/mastra's handles, procvisor's own Mastra-shaped `ProcessHandle`) and the supervisor
// of a persistent sandbox. What a wait resolves with, which exit code a kill or a timeout gives,
// what stderr says about it, when stdin may be written, how many exited processes are kept, how
// much output a handle may retain.

const errors = require('../native/errors')
const { describe } = require('../native/util')

/** Mastra's exit codes: 124 on timeout, 128 when killed by a signal, else the process's own. */
function mastraExitCode(exit) {
  if (exit.timedOut) return 124
  if (exit.signal !== undefined && exit.signal !== null) return 128
  return exit.code
}

/** What Mastra appends to stderr when a spawn's `timeout` ended the process. */
function timeoutNote(timeoutMs) {
  return `\nProcess timed out after ${timeoutMs}ms`
}

/** What stderr ends with when the end of a sandbox's lifetime (`timeoutMs`) killed the process. */
function lifetimeNote(lifetimeMs) {
  return `\nProcess killed: the sandbox's lifetime (timeoutMs) of ${lifetimeMs} ms ended`
}

/**
 * How a process ended, in Mastra's terms, from procvisor's exit (`{ code, signal, timedOut,
 * afterMs }`): `{ exitCode, success, executionTimeMs, killed, timedOut, note }`, where `note` is
 * the text stderr ends with ('' when none). `lifetimeMs` is the sandbox lifetime whose end is
 * killing the process, if it is: a process that a signal then ended counts as timed out (124), as
 * Mastra reports its per-command timeout; one that ended by itself keeps its result.
 * `timeoutMs` is the spawn's timeout, named in the note.
 */
function ending(exit, { timeoutMs, lifetimeMs } = {}) {
  const byLifetime = !exit.timedOut && lifetimeMs !== undefined && exit.signal !== undefined && exit.signal !== null
  const timedOut = Boolean(exit.timedOut) || byLifetime
  const exitCode = byLifetime ? 124 : mastraExitCode(exit)
  return {
    exitCode,
    success: exitCode === 0,
    executionTimeMs: exit.afterMs,
    // Mastra reports a timeout as killed too (its timeout is a kill).
    killed: exitCode === 128 || timedOut,
    timedOut,
    note: exit.timedOut ? timeoutNote(timeoutMs) : byLifetime ? lifetimeNote(lifetimeMs) : '',
    ...service(exit),
  }
}

/** A service's count and whether it gave up, as its end carries them (nothing for a process launched without `restart`). */
function service(exit) {
  return exit.restarts === undefined || exit.restarts === null ? {} : { restarts: exit.restarts, gaveUp: exit.gaveUp === true }
}

/**
 * Mastra's `wait()` result from an ending and the retained text (stderr with the note in it):
 * every field, `killed` and `timedOut` included when false, as Mastra's LocalSandbox gives them.
 */
function commandResult(end, stdout, stderr) {
  return {
    success: end.exitCode === 0,
    exitCode: end.exitCode,
    stdout,
    stderr,
    executionTimeMs: end.executionTimeMs,
    killed: end.killed === true,
    timedOut: end.timedOut === true,
    ...service(end),
  }
}

/**
 * The result of procvisor's own `ProcessHandle.wait()` (a process's `nativeHandle` included):
 * Mastra's, naming `timedOut`, `killed` and the truncation fields only when they hold. `out`:
 * `{ stdout, stderr, stdoutDroppedBytes, stderrDroppedBytes }`, stderr with the note in it.
 */
function handleResult(end, out) {
  const result = commandResult(end, out.stdout, out.stderr)
  if (!result.timedOut) delete result.timedOut
  if (!result.killed) delete result.killed
  if (out.stdoutDroppedBytes > 0) {
    result.stdoutTruncated = true
    result.stdoutDroppedBytes = out.stdoutDroppedBytes
  }
  if (out.stderrDroppedBytes > 0) {
    result.stderrTruncated = true
    result.stderrDroppedBytes = out.stderrDroppedBytes
  }
  return result
}

/** Mastra's ProcessInfo of a process: `exitCode` only once it exited. */
function processInfo({ pid, command, exitCode, name }) {
  const info = { pid, command, running: exitCode === undefined }
  if (exitCode !== undefined) info.exitCode = exitCode
  // Only when given: a list entry of an unnamed process is exactly Mastra's.
  if (name !== undefined) info.name = name
  return info
}

/**
 * Exited processes a sandbox keeps for `list()` and `get()` until they are released or read,
 * whichever side runs them; past this, the oldest exited ones are forgotten first.
 */
const MAX_EXITED = 1000

/**
 * Forgets the oldest exited entries beyond MAX_EXITED. `entries` (a Map's values, or any
 * iterable with its `size` given) iterates in start order; `exited(entry)` says whether one has
 * exited, `forget(entry)` drops it. A table of no more than MAX_EXITED entries holds no more
 * exited ones either: it is not walked.
 */
function pruneExited(entries, exited, forget, size) {
  if (size !== undefined && size <= MAX_EXITED) return
  const done = []
  for (const e of entries) if (exited(e)) done.push(e)
  for (const e of done.slice(0, Math.max(0, done.length - MAX_EXITED))) forget(e)
}

/**
 * Mastra's stdin rules, in Mastra's order: not after the exit (naming the exit code Mastra
 * reports), not when spawned with `stdinMode: 'ignore'`.
 */
function checkStdin(pid, exitCode, stdinMode) {
  checkNotExited(pid, exitCode)
  if (stdinMode === 'ignore') throw new errors.ProcessStdinUnavailableError(`Process ${pid} does not have stdin available`)
}

/** After the exit, stdin calls reject with the exit code the face reports. */
function checkNotExited(pid, exitCode) {
  if (exitCode !== undefined) throw new errors.ProcessAlreadyExitedError(`Process ${pid} has already exited with code ${exitCode}`)
}

/** What `sendStdin` takes: a string (written as UTF-8) or bytes. */
function checkStdinData(data) {
  if (typeof data !== 'string' && !(data instanceof Uint8Array)) {
    throw errors.invalidOption(`sendStdin data must be a string or Uint8Array, got ${describe(data)}`)
  }
}

/**
 * Mastra's `maxRetainedBytes` (given, not absent): a non-negative integer or Infinity, else a
 * RangeError with Mastra's own message. Returns it.
 */
function retainedBytes(v) {
  if (v === Infinity || (Number.isInteger(v) && v >= 0)) return v
  throw errors.invalidOption('maxRetainedBytes must be a non-negative integer or Infinity')
}

/** The stdin mode of a spawn: Mastra's `'ignore'`, else a pipe. */
function stdinModeOf(mode) {
  return mode === 'ignore' ? 'ignore' : 'pipe'
}

/** Mastra's `shellQuote` (not exported by @mastra/core): safe words pass, the rest is single-quoted. */
function shellQuote(arg) {
  if (/^[a-zA-Z0-9._\-/=:@]+$/.test(arg)) return arg
  return `'${arg.replace(/'/g, "'\\''")}'`
}

module.exports = {
  mastraExitCode,
  timeoutNote,
  lifetimeNote,
  ending,
  commandResult,
  handleResult,
  processInfo,
  MAX_EXITED,
  pruneExited,
  checkStdin,
  checkNotExited,
  checkStdinData,
  retainedBytes,
  stdinModeOf,
  shellQuote,
}
