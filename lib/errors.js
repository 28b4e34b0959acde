'use strict'
// Typed errors. Every class has a stable `code` (never renamed: programs branch on it) and works
// with `instanceof`. The native layer reports errors as "[CODE] message"; `fromNative` maps them.

class ProcessError extends Error {
  constructor(message, options) {
    super(message, options)
    this.name = new.target.name
  }
}

const defs = [
  // The seed-002 classes.
  ['StaleProcessHandleError', 'STALE_PROCESS_HANDLE'],
  ['ProcessNotFoundError', 'PROCESS_NOT_FOUND'],
  ['ProcessWaitTimeoutError', 'PROCESS_WAIT_TIMEOUT'],
  ['ProcessAbortedError', 'PROCESS_ABORTED'],
  ['ProcessReadyTimeoutError', 'PROCESS_READY_TIMEOUT'],
  ['ProcessExitedBeforeReadyError', 'PROCESS_EXITED_BEFORE_READY'],
  ['ProcessExitedBeforeLogError', 'PROCESS_EXITED_BEFORE_LOG'],
  ['InvalidProcessCwdError', 'INVALID_PROCESS_CWD'],
  ['InvalidProcessEnvironmentError', 'INVALID_PROCESS_ENVIRONMENT'],
  ['InvalidProcessCursorError', 'INVALID_PROCESS_CURSOR'],
  ['ProcessSpawnFailedError', 'PROCESS_SPAWN_FAILED'],
  // Ours: the local equivalents and the cases the seed leaves open.
  ['InvalidProcessCommandError', 'INVALID_PROCESS_COMMAND'],
  ['InvalidProcessSignalError', 'INVALID_PROCESS_SIGNAL'],
  ['ProcessManagerClosedError', 'PROCESS_MANAGER_CLOSED'],
  ['ProcessAlreadyExitedError', 'PROCESS_ALREADY_EXITED'],
  ['ProcessStdinUnavailableError', 'PROCESS_STDIN_UNAVAILABLE'],
  ['ProcessStdinClosedError', 'PROCESS_STDIN_CLOSED'],
  ['ProcessStdinWriteError', 'PROCESS_STDIN_WRITE_FAILED'],
  ['ProcessOutputTruncatedError', 'PROCESS_OUTPUT_TRUNCATED'],
]

const classes = { ProcessError }
const byCode = new Map()
for (const [name, code] of defs) {
  const C = { [name]: class extends ProcessError {} }[name]
  Object.defineProperty(C.prototype, 'code', { value: code, enumerable: true })
  Object.defineProperty(C, 'code', { value: code })
  classes[name] = C
  byCode.set(code, C)
}

/**
 * Bad option values. A RangeError (Mastra throws RangeError for a bad `maxRetainedBytes`), with a
 * stable code like the others.
 */
class InvalidProcessOptionError extends RangeError {
  constructor(message, options) {
    super(message, options)
    this.name = 'InvalidProcessOptionError'
  }
}
Object.defineProperty(InvalidProcessOptionError.prototype, 'code', { value: 'INVALID_PROCESS_OPTION', enumerable: true })
Object.defineProperty(InvalidProcessOptionError, 'code', { value: 'INVALID_PROCESS_OPTION' })
classes.InvalidProcessOptionError = InvalidProcessOptionError
byCode.set('INVALID_PROCESS_OPTION', InvalidProcessOptionError)

const NATIVE = /^\[([A-Z_]+)\] ([\s\S]*)$/

/** Turns a native "[CODE] message" error into its typed class; other errors pass through. */
function fromNative(err) {
  if (!err || typeof err.message !== 'string') return err
  const m = NATIVE.exec(err.message)
  if (!m) return err
  const C = byCode.get(m[1])
  if (!C) return err
  return new C(m[2])
}

/** Calls a native function and rethrows its errors typed (sync or async). */
function call(fn) {
  let r
  try {
    r = fn()
  } catch (e) {
    throw fromNative(e)
  }
  if (r && typeof r.then === 'function') {
    return r.then(undefined, (e) => {
      throw fromNative(e)
    })
  }
  return r
}

function invalidOption(message) {
  return new InvalidProcessOptionError(message)
}

module.exports = { ...classes, fromNative, call, invalidOption }
