'use strict'
// Typed errors. Every class has a stable `code` (never renamed: programs branch on it) and works
// with `instanceof`. The native layer builds its errors through `fromNative`, registered once per
// realm: a failed native call throws or rejects with the right class already.

class ProcessError extends Error {
  constructor(message, options) {
    super(message, options)
    this.name = new.target.name
  }
}

const defs = [
  // The Processes API's classes.
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
  // Local cases: commands, signals, a closed manager, stdin and the byte reader.
  ['InvalidProcessCommandError', 'INVALID_PROCESS_COMMAND'],
  ['InvalidProcessSignalError', 'INVALID_PROCESS_SIGNAL'],
  ['ProcessManagerClosedError', 'PROCESS_MANAGER_CLOSED'],
  ['ProcessAlreadyExitedError', 'PROCESS_ALREADY_EXITED'],
  ['ProcessStdinUnavailableError', 'PROCESS_STDIN_UNAVAILABLE'],
  ['ProcessStdinClosedError', 'PROCESS_STDIN_CLOSED'],
  ['ProcessStdinWriteError', 'PROCESS_STDIN_WRITE_FAILED'],
  ['ProcessOutputTruncatedError', 'PROCESS_OUTPUT_TRUNCATED'],
  // Sandboxes: a checkpoint that could not be captured, restored or removed (it names the path).
  ['SandboxSnapshotError', 'SANDBOX_SNAPSHOT_FAILED'],
  ['ProcessNoTerminalError', 'PROCESS_NO_TERMINAL'],
  // Persistent sandboxes: the supervisor went away; the other side speaks another protocol; a
  // socket or its directory that is not this user's alone, or a connection of another user.
  ['SandboxSupervisorLostError', 'SANDBOX_SUPERVISOR_LOST'],
  ['SandboxProtocolError', 'SANDBOX_PROTOCOL_MISMATCH'],
  ['SandboxAccessError', 'SANDBOX_ACCESS_DENIED'],
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

/**
 * The error of a failed native call, called by the addon on the JS thread. A failed spawn also
 * carries the OS error: `osCode` ('E2BIG', 'ENOENT', …) and `errno`.
 */
function fromNative(code, message, osCode, errno) {
  const C = byCode.get(code) || ProcessError
  const err = new C(message)
  if (osCode !== null && osCode !== undefined) err.osCode = osCode
  if (errno !== null && errno !== undefined) err.errno = errno
  return err
}

function invalidOption(message) {
  return new InvalidProcessOptionError(message)
}

/** The class of a stable `code`, or undefined. */
function byCodeOf(code) {
  return byCode.get(code)
}

module.exports = { ...classes, fromNative, invalidOption, byCode: byCodeOf }
