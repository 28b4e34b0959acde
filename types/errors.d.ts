/**
 * Errors: every class has a stable `code` (on instances and on the class).
 * Re-exported by `procvisor` (index.d.ts).
 * @module
 */
import type { Process, ProcessExit } from './processes-api'

/** Base class of procvisor's errors (except {@link InvalidProcessOptionError}, a RangeError). */
export declare class ProcessError extends Error {
  /** The stable code of the error class (e.g. `'PROCESS_WAIT_TIMEOUT'`); branch on it. */
  readonly code: string
}
/** `STALE_PROCESS_HANDLE`: the handle's manager was closed. */
export declare class StaleProcessHandleError extends ProcessError {
  /** Always `'STALE_PROCESS_HANDLE'`. */
  readonly code: 'STALE_PROCESS_HANDLE'
  /** The same code on the class, for `err.code === StaleProcessHandleError.code`. */
  static readonly code: 'STALE_PROCESS_HANDLE'
}
/** `PROCESS_NOT_FOUND`: exported for parity with the Processes API; lookups return null/undefined instead. */
export declare class ProcessNotFoundError extends ProcessError {
  /** Always `'PROCESS_NOT_FOUND'`. */
  readonly code: 'PROCESS_NOT_FOUND'
  /** The same code on the class, for `err.code === ProcessNotFoundError.code`. */
  static readonly code: 'PROCESS_NOT_FOUND'
}
/** `PROCESS_WAIT_TIMEOUT`: a local wait (`output`, `waitForExit`, `waitForLog`) ran out of time. */
export declare class ProcessWaitTimeoutError extends ProcessError {
  /** Always `'PROCESS_WAIT_TIMEOUT'`. */
  readonly code: 'PROCESS_WAIT_TIMEOUT'
  /** The same code on the class, for `err.code === ProcessWaitTimeoutError.code`. */
  static readonly code: 'PROCESS_WAIT_TIMEOUT'
}
/** `PROCESS_ABORTED`: the caller's AbortSignal ended a wait or stream (the process keeps running). */
export declare class ProcessAbortedError extends ProcessError {
  /** Always `'PROCESS_ABORTED'`. */
  readonly code: 'PROCESS_ABORTED'
  /** The same code on the class, for `err.code === ProcessAbortedError.code`. */
  static readonly code: 'PROCESS_ABORTED'
}
/** `PROCESS_READY_TIMEOUT`: waitForPort's deadline passed. */
export declare class ProcessReadyTimeoutError extends ProcessError {
  /** Always `'PROCESS_READY_TIMEOUT'`. */
  readonly code: 'PROCESS_READY_TIMEOUT'
  /** The same code on the class, for `err.code === ProcessReadyTimeoutError.code`. */
  static readonly code: 'PROCESS_READY_TIMEOUT'
}
/**
 * `PROCESS_EXITED_BEFORE_READY`: the process ended before its port was ready. The message names
 * the pid, the exit code or signal, the last probe and the start of {@link stderrTail}:
 * `process 4242 exited with code 1 before port 3000 was ready (last probe: …); stderr: "Error: listen EADDRINUSE…"`.
 */
export declare class ProcessExitedBeforeReadyError extends ProcessError {
  /** Always `'PROCESS_EXITED_BEFORE_READY'`. */
  readonly code: 'PROCESS_EXITED_BEFORE_READY'
  /** The OS pid of the process that ended (`Process.pid`; a Mastra handle's `pid` as a number). */
  readonly pid: number
  /** Its exit code, or 128 + signal number when a signal ended it (as {@link ProcessExit.code}). */
  readonly exitCode: number
  /** The number of the signal that ended it; absent when it exited by itself. */
  readonly signal?: number
  /**
   * The end of its stderr: the last 4 KiB still in the output log, as text (empty when it wrote
   * none). The message quotes the first 200 characters of it.
   */
  readonly stderrTail: string
  /** The same code on the class, for `err.code === ProcessExitedBeforeReadyError.code`. */
  static readonly code: 'PROCESS_EXITED_BEFORE_READY'
}
/**
 * `PROCESS_EXITED_BEFORE_LOG`: the process ended before its output matched. The message names the
 * pid, the exit code or signal and the start of {@link stderrTail}.
 */
export declare class ProcessExitedBeforeLogError extends ProcessError {
  /** Always `'PROCESS_EXITED_BEFORE_LOG'`. */
  readonly code: 'PROCESS_EXITED_BEFORE_LOG'
  /** The OS pid of the process that ended (`Process.pid`; a Mastra handle's `pid` as a number). */
  readonly pid: number
  /** Its exit code, or 128 + signal number when a signal ended it (as {@link ProcessExit.code}). */
  readonly exitCode: number
  /** The number of the signal that ended it; absent when it exited by itself. */
  readonly signal?: number
  /**
   * The end of its stderr: the last 4 KiB still in the output log, as text (empty when it wrote
   * none). The message quotes the first 200 characters of it.
   */
  readonly stderrTail: string
  /** The same code on the class, for `err.code === ProcessExitedBeforeLogError.code`. */
  static readonly code: 'PROCESS_EXITED_BEFORE_LOG'
}
/** `INVALID_PROCESS_CWD`: the cwd does not exist, is not a directory, or cannot be entered. */
export declare class InvalidProcessCwdError extends ProcessError {
  /** Always `'INVALID_PROCESS_CWD'`. */
  readonly code: 'INVALID_PROCESS_CWD'
  /** The same code on the class, for `err.code === InvalidProcessCwdError.code`. */
  static readonly code: 'INVALID_PROCESS_CWD'
}
/** `INVALID_PROCESS_ENVIRONMENT`: an env name is empty or holds `=`/NUL, or a value is not a string or holds NUL. */
export declare class InvalidProcessEnvironmentError extends ProcessError {
  /** Always `'INVALID_PROCESS_ENVIRONMENT'`. */
  readonly code: 'INVALID_PROCESS_ENVIRONMENT'
  /** The same code on the class, for `err.code === InvalidProcessEnvironmentError.code`. */
  static readonly code: 'INVALID_PROCESS_ENVIRONMENT'
}
/** `INVALID_PROCESS_CURSOR`: a cursor of another process, malformed, or from the future. */
export declare class InvalidProcessCursorError extends ProcessError {
  /** Always `'INVALID_PROCESS_CURSOR'`. */
  readonly code: 'INVALID_PROCESS_CURSOR'
  /** The same code on the class, for `err.code === InvalidProcessCursorError.code`. */
  static readonly code: 'INVALID_PROCESS_CURSOR'
}
/** `PROCESS_SPAWN_FAILED`: the executable could not be started (not found, not executable, EMFILE, EAGAIN…). */
export declare class ProcessSpawnFailedError extends ProcessError {
  /** Always `'PROCESS_SPAWN_FAILED'`. */
  readonly code: 'PROCESS_SPAWN_FAILED'
  /** The OS error by its name (`'ENOENT'`, `'EACCES'`, `'E2BIG'`, `'EMFILE'`, …), when the OS refused. */
  readonly osCode?: string
  /** The OS error number, when the OS refused. */
  readonly errno?: number
  /** The same code on the class, for `err.code === ProcessSpawnFailedError.code`. */
  static readonly code: 'PROCESS_SPAWN_FAILED'
}
/** `INVALID_PROCESS_COMMAND`: an empty command, a non-string argument, or a NUL byte. */
export declare class InvalidProcessCommandError extends ProcessError {
  /** Always `'INVALID_PROCESS_COMMAND'`. */
  readonly code: 'INVALID_PROCESS_COMMAND'
  /** The same code on the class, for `err.code === InvalidProcessCommandError.code`. */
  static readonly code: 'INVALID_PROCESS_COMMAND'
}
/** `INVALID_PROCESS_SIGNAL`: a signal that is neither an integer from 1 to 64 nor a signal name of this platform; the message names it (nothing was sent). */
export declare class InvalidProcessSignalError extends ProcessError {
  /** Always `'INVALID_PROCESS_SIGNAL'`. */
  readonly code: 'INVALID_PROCESS_SIGNAL'
  /** The same code on the class, for `err.code === InvalidProcessSignalError.code`. */
  static readonly code: 'INVALID_PROCESS_SIGNAL'
}
/** `PROCESS_MANAGER_CLOSED`: the manager was closed. */
export declare class ProcessManagerClosedError extends ProcessError {
  /** Always `'PROCESS_MANAGER_CLOSED'`. */
  readonly code: 'PROCESS_MANAGER_CLOSED'
  /** The same code on the class, for `err.code === ProcessManagerClosedError.code`. */
  static readonly code: 'PROCESS_MANAGER_CLOSED'
}
/** `PROCESS_ALREADY_EXITED`: stdin used after exit (`Process <pid> has already exited with code <n>`). */
export declare class ProcessAlreadyExitedError extends ProcessError {
  /** Always `'PROCESS_ALREADY_EXITED'`. */
  readonly code: 'PROCESS_ALREADY_EXITED'
  /** The same code on the class, for `err.code === ProcessAlreadyExitedError.code`. */
  static readonly code: 'PROCESS_ALREADY_EXITED'
}
/** `PROCESS_STDIN_UNAVAILABLE`: stdin used on a process spawned with `stdinMode: 'ignore'`. */
export declare class ProcessStdinUnavailableError extends ProcessError {
  /** Always `'PROCESS_STDIN_UNAVAILABLE'`. */
  readonly code: 'PROCESS_STDIN_UNAVAILABLE'
  /** The same code on the class, for `err.code === ProcessStdinUnavailableError.code`. */
  static readonly code: 'PROCESS_STDIN_UNAVAILABLE'
}
/** `PROCESS_STDIN_CLOSED`: a write after `closeStdin()`. */
export declare class ProcessStdinClosedError extends ProcessError {
  /** Always `'PROCESS_STDIN_CLOSED'`. */
  readonly code: 'PROCESS_STDIN_CLOSED'
  /** The same code on the class, for `err.code === ProcessStdinClosedError.code`. */
  static readonly code: 'PROCESS_STDIN_CLOSED'
}
/** `PROCESS_STDIN_WRITE_FAILED`: the child closed its stdin (EPIPE) or the write failed. */
export declare class ProcessStdinWriteError extends ProcessError {
  /** Always `'PROCESS_STDIN_WRITE_FAILED'`. */
  readonly code: 'PROCESS_STDIN_WRITE_FAILED'
  /** The same code on the class, for `err.code === ProcessStdinWriteError.code`. */
  static readonly code: 'PROCESS_STDIN_WRITE_FAILED'
}
/**
 * `PROCESS_STDIN_BACKLOG_FULL`: a write refused, nothing of it sent, because 16 MiB written before
 * it are still unread by the process. Await earlier writes (or the `writer` stream's callbacks)
 * before sending more.
 */
export declare class ProcessStdinBacklogError extends ProcessError {
  /** Always `'PROCESS_STDIN_BACKLOG_FULL'`. */
  readonly code: 'PROCESS_STDIN_BACKLOG_FULL'
  /** The same code on the class, for `err.code === ProcessStdinBacklogError.code`. */
  static readonly code: 'PROCESS_STDIN_BACKLOG_FULL'
}
/** `PROCESS_OUTPUT_TRUNCATED`: `handle.reader` fell behind the bounded log and output was lost. */
export declare class ProcessOutputTruncatedError extends ProcessError {
  /** Always `'PROCESS_OUTPUT_TRUNCATED'`. */
  readonly code: 'PROCESS_OUTPUT_TRUNCATED'
  /** The same code on the class, for `err.code === ProcessOutputTruncatedError.code`. */
  static readonly code: 'PROCESS_OUTPUT_TRUNCATED'
}
/** `PROCESS_NO_TERMINAL`: `resize` on a process that was not started with `pty`. */
export declare class ProcessNoTerminalError extends ProcessError {
  /** Always `'PROCESS_NO_TERMINAL'`. */
  readonly code: 'PROCESS_NO_TERMINAL'
  /** The same code on the class, for `err.code === ProcessNoTerminalError.code`. */
  static readonly code: 'PROCESS_NO_TERMINAL'
}
/**
 * `SANDBOX_SNAPSHOT_FAILED`: a checkpoint of a sandbox's working directory could not be captured,
 * restored or removed (`procvisor/mastra`'s `NativeLocalSandbox`). A failed capture leaves the
 * previous checkpoint as it was; a failed restore leaves the working directory empty.
 */
export declare class SandboxSnapshotError extends ProcessError {
  /** Always `'SANDBOX_SNAPSHOT_FAILED'`. */
  readonly code: 'SANDBOX_SNAPSHOT_FAILED'
  /** The same code on the class, for `err.code === SandboxSnapshotError.code`. */
  static readonly code: 'SANDBOX_SNAPSHOT_FAILED'
  /** The file or directory the copy failed on. */
  readonly path?: string
  /** The system call that failed there (`open`, `copy_file_range`, `rename`, …). */
  readonly syscall?: string
  /** The OS error by its symbolic name (`EACCES`, `ENOSPC`, `EFBIG`, …). */
  readonly osCode?: string
  /** The OS error number. */
  readonly errno?: number
}
/**
 * `SANDBOX_SUPERVISOR_LOST`: a persistent sandbox (`procvisor/mastra`'s `NativeLocalSandbox`
 * with `persistent: true`) has no supervisor to speak to: it died, its lifetime ended, it was
 * stopped elsewhere, or this object is not attached (never started, detached). Raised by the
 * next call; pending `wait()`s reject with it. `start()` attaches again, or starts a new
 * supervisor.
 */
export declare class SandboxSupervisorLostError extends ProcessError {
  /** Always `'SANDBOX_SUPERVISOR_LOST'`. */
  readonly code: 'SANDBOX_SUPERVISOR_LOST'
  /** The same code on the class, for `err.code === SandboxSupervisorLostError.code`. */
  static readonly code: 'SANDBOX_SUPERVISOR_LOST'
}
/**
 * `SANDBOX_PROTOCOL_MISMATCH`: a persistent sandbox's supervisor and this Node process speak
 * different protocol versions (the message names both procvisor versions). They refuse each
 * other before anything else is exchanged, so neither misreads the other; stop the old sandbox
 * with the procvisor that started it, or let its lifetime end. Also a call the supervisor cannot
 * read, or one too large for a frame, or a reply too large to send: that call fails alone.
 */
export declare class SandboxProtocolError extends ProcessError {
  /** Always `'SANDBOX_PROTOCOL_MISMATCH'`. */
  readonly code: 'SANDBOX_PROTOCOL_MISMATCH'
  /** The same code on the class, for `err.code === SandboxProtocolError.code`. */
  static readonly code: 'SANDBOX_PROTOCOL_MISMATCH'
}
/**
 * `SANDBOX_ACCESS_DENIED`: a persistent sandbox's socket is not this user's alone: its directory
 * is not owned by this user with mode 0700, the socket is served by another uid, or the
 * supervisor refused a client of another uid (checked with the kernel, not with file modes).
 */
export declare class SandboxAccessError extends ProcessError {
  /** Always `'SANDBOX_ACCESS_DENIED'`. */
  readonly code: 'SANDBOX_ACCESS_DENIED'
  /** The same code on the class, for `err.code === SandboxAccessError.code`. */
  static readonly code: 'SANDBOX_ACCESS_DENIED'
}
/** `INVALID_PROCESS_OPTION`: an option of the wrong type or out of range. A RangeError. */
export declare class InvalidProcessOptionError extends RangeError {
  /** Always `'INVALID_PROCESS_OPTION'`. */
  readonly code: 'INVALID_PROCESS_OPTION'
  /** The same code on the class, for `err.code === InvalidProcessOptionError.code`. */
  static readonly code: 'INVALID_PROCESS_OPTION'
}
