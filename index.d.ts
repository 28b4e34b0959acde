/**
 * procvisor — a native process supervisor for Node.js agents.
 *
 * Two faces over one Rust core:
 * - the Mastra surface: {@link ProcessManager.spawn} / `list` / `get` / `kill` / `release` and
 *   {@link ProcessHandle}, behaving exactly as Mastra's `SandboxProcessManager`;
 * - the Processes API (argv {@link ProcessManager.exec}, cursor logs, readiness waits, typed errors).
 *
 * Every process leads its own process group; signals, timeouts and kills reach grandchildren; no
 * process outlives the Node process (exit hook, worker cleanup hook, and a watchdog for SIGKILL).
 * Linux and macOS. Windows is not supported (importing throws a clear error).
 */

import type { Readable, Writable } from 'node:stream'

// ---------------------------------------------------------------------------------------------
// Shared option types
// ---------------------------------------------------------------------------------------------

/**
 * Per-process resource limits (soft = hard = the value, capped at the current hard limit), set in
 * the child before exec, so they hold from its first instruction and bind everything it forks.
 * A process with limits is spawned by fork + exec (off the JS thread) instead of `posix_spawn`.
 */
export interface ProcessLimits {
  /** RLIMIT_AS: bytes of virtual address space. */
  addressSpace?: number
  /** RLIMIT_CPU: seconds of CPU time; the process is killed (SIGKILL) at the limit. */
  cpuSeconds?: number
  /** RLIMIT_NOFILE: open file descriptors. */
  openFiles?: number
  /** RLIMIT_FSIZE: largest file the process may write, in bytes (writes beyond fail with EFBIG). */
  fileSize?: number
  /** RLIMIT_NPROC: processes of the user (not enforced for root). */
  processes?: number
}

/** Constructor options of {@link ProcessManager}. */
export interface ProcessManagerOptions {
  /**
   * The sandbox environment: every process gets `{ PATH: process.env.PATH, ...env, ...callEnv }`
   * and nothing else from `process.env`. A name set to `undefined` is dropped.
   */
  env?: Record<string, string | undefined>
  /** Default cwd; relative cwds resolve against it. Defaults to `process.cwd()`. */
  workingDirectory?: string
}

// ---------------------------------------------------------------------------------------------
// Mastra surface
// ---------------------------------------------------------------------------------------------

/** Options of {@link ProcessManager.spawn} (Mastra's `SpawnProcessOptions`, plus limits). */
export interface SpawnProcessOptions {
  /** Lifetime in ms: SIGTERM to the group on expiry, SIGKILL after `gracePeriod`. Exit code 124. `0` = none. */
  timeout?: number
  /** Environment for this process, over the manager's. `undefined` drops a name. */
  env?: Record<string, string | undefined>
  /** Working directory: absolute, or relative to the manager's working directory. */
  cwd?: string
  /** Receives every decoded stdout chunk (a split UTF-8 character arrives whole), for the handle's lifetime. */
  onStdout?: (data: string) => void
  /** Receives every decoded stderr chunk, for the handle's lifetime. */
  onStderr?: (data: string) => void
  /** Aborting kills the process. */
  abortSignal?: AbortSignal
  /**
   * UTF-8 bytes of text kept per stream in `stdout` / `stderr` (the newest, never splitting a code
   * point). Default 1 MiB (1048576); `0` keeps none; `Infinity` keeps all. Anything else that is not
   * a non-negative integer is a RangeError ({@link InvalidProcessOptionError}).
   */
  maxRetainedBytes?: number
  /** `'pipe'` (default): stdin is writable. `'ignore'`: the child sees EOF at once. */
  stdinMode?: 'pipe' | 'ignore'
  /** Milliseconds between the timeout's SIGTERM and its SIGKILL. Default 1000. */
  gracePeriod?: number
  /** Resource limits for this process. */
  limits?: ProcessLimits
  /**
   * Runs this argv (executable, then arguments) without a shell instead of `/bin/sh -c command`;
   * `command` is then only the label shown by `list()`. Used for isolation wrappers.
   */
  argv?: readonly string[]
}

/** What `list()` returns per tracked handle. */
export interface ProcessInfo {
  /** The OS pid, as a string. */
  pid: string
  command?: string
  running: boolean
  /** Set once exited. */
  exitCode?: number
}

/** The result of {@link ProcessHandle.wait}. */
export interface CommandResult {
  /** `exitCode === 0`. */
  success: boolean
  /** The process's code; 124 on timeout; 128 when killed by a signal. */
  exitCode: number
  stdout: string
  /** On timeout it ends with `\nProcess timed out after <N>ms`. */
  stderr: string
  /** Fractional milliseconds from spawn to exit. */
  executionTimeMs: number
  timedOut?: boolean
  killed?: boolean
  stdoutTruncated?: boolean
  stderrTruncated?: boolean
  stdoutDroppedBytes?: number
  stderrDroppedBytes?: number
  command?: string
  args?: string[]
}

/** Options of {@link ProcessHandle.wait}. */
export interface WaitOptions {
  /** Receives stdout chunks until this wait settles. */
  onStdout?: (data: string) => void
  /** Receives stderr chunks until this wait settles. */
  onStderr?: (data: string) => void
  /** Aborting kills the process (the wait then settles with its result). */
  abortSignal?: AbortSignal
}

/**
 * A process started by {@link ProcessManager.spawn}: Mastra's `ProcessHandle`, plus the
 * Processes-API readiness and log methods (both are views of the same process).
 */
export declare class ProcessHandle {
  private constructor()
  /** The OS pid (also the process group id), as a decimal string. */
  readonly pid: string
  /** The id of this process in the Processes API (`getProcess(id)`, log cursors). */
  readonly id: string
  /** `undefined` while running; the exit code once exited and drained (124 timeout, 128 signal). */
  readonly exitCode: number | undefined
  /** The command string (set by the manager; writable). */
  command: string | undefined
  /** Retained stdout text (newest `maxRetainedBytes`). */
  readonly stdout: string
  /** Retained stderr text; ends with the timeout message after a timeout. */
  readonly stderr: string
  readonly stdoutTruncated: boolean
  readonly stderrTruncated: boolean
  readonly stdoutDroppedBytes: number
  readonly stderrDroppedBytes: number
  /** Waits for exit with all output drained; the same result every call. */
  wait(options?: WaitOptions): Promise<CommandResult>
  /**
   * SIGKILL to the whole process group; `true` at once (without waiting for exit), `false` if it
   * had already exited. With a numeric `signal` (1–64) sends that signal instead.
   */
  kill(signal?: number): Promise<boolean>
  /** Writes to stdin; resolves once written; ordered. Rejects after exit or with `stdinMode: 'ignore'`. */
  sendStdin(data: string | Uint8Array): Promise<void>
  /** Sends EOF. Idempotent while running; rejects after exit or when stdin is ignored. */
  closeStdin(): Promise<void>
  /**
   * stdout as a Node Readable (created on first use, replays retained output, ends at exit). It
   * loses nothing: while it is not read, the child is held back (as with a paused
   * `child_process` stream). Created after output was already evicted from the bounded log, it
   * errors with {@link ProcessOutputTruncatedError} rather than skip bytes silently.
   */
  readonly reader: Readable
  /** stdin as a Node Writable; `end()` closes stdin. */
  readonly writer: Writable
  /** {@link Process.status} of this process. */
  status(): Promise<ProcessStatus>
  /** {@link Process.logs} of this process. */
  logs(options?: ProcessLogsOptions): Promise<ReadableStream<ProcessLogEvent>>
  /** {@link Process.output} of this process. */
  output(options: ProcessOutputOptions & { encoding: 'utf8' }): Promise<ProcessOutput<string>>
  output(options?: ProcessOutputOptions): Promise<ProcessOutput<Uint8Array>>
  /** {@link Process.waitForExit} of this process. */
  waitForExit(options?: WaitForExitOptions): Promise<ProcessExit>
  /** {@link Process.waitForLog} of this process. */
  waitForLog(pattern: string | RegExp, options?: WaitForLogOptions): Promise<WaitForLogResult>
  /** {@link Process.waitForPort} of this process, e.g. `handle.waitForPort(3000)` after `spawn('npm run dev')`. */
  waitForPort(port: number, options?: WaitForPortOptions): Promise<void>
}

// ---------------------------------------------------------------------------------------------
// Processes API (seed 002)
// ---------------------------------------------------------------------------------------------

/** argv: the executable, then its arguments, each passed as is (no shell). */
export type ProcessCommand = readonly [executable: string, ...args: string[]]

/** Options of {@link ProcessManager.exec}. */
export interface ExecOptions {
  /** Working directory; must exist and be a directory ({@link InvalidProcessCwdError}). */
  cwd?: string
  /** Environment overlay for this launch only (names non-empty, no `=` or NUL; values without NUL). */
  env?: Record<string, string | undefined>
  /** Lifetime in ms: SIGTERM to the group, SIGKILL after the grace; the exit says `timedOut`. */
  timeout?: number
  /** Milliseconds between the timeout's SIGTERM and SIGKILL. Default 1000. */
  gracePeriod?: number
  /** Resource limits. */
  limits?: ProcessLimits
}

/** How the root process ended (the outcome of the group is its root's). */
export interface ProcessExit {
  /** Exit code, or 128 + signal number. */
  code: number
  /** The signal that ended the root, if any. */
  signal?: number
  timedOut: boolean
}

export interface ProcessFailure {
  code: string
  message: string
}

interface ProcessStatusBase {
  id: string
  pid: number
  command: ProcessCommand
  cwd?: string
  /** ISO 8601. */
  startedAt: string
}

/** `running` until the root has exited and the whole group is gone. */
export type ProcessStatus =
  | (ProcessStatusBase & { state: 'running' })
  | (ProcessStatusBase & { state: 'exited'; endedAt: string; exit: ProcessExit })
  | (ProcessStatusBase & { state: 'error'; endedAt: string; error: ProcessFailure })

export interface ProcessOutput<T = Uint8Array> {
  stdout: T
  stderr: T
  exitCode: number
  signal?: number
  timedOut: boolean
  /** `maxBytes` cut something, or the bounded log had evicted output. */
  truncated: boolean
}

export interface ProcessOutputOptions {
  /** Decode as UTF-8 (invalid bytes become U+FFFD). Default: bytes. */
  encoding?: 'utf8'
  /** Cap per stream, in bytes (non-negative, finite). No cap by default. */
  maxBytes?: number
  /** Local wait deadline in ms ({@link ProcessWaitTimeoutError}); the process keeps running. */
  timeout?: number
  /** Cancels this wait only ({@link ProcessAbortedError}). */
  signal?: AbortSignal
}

export interface ProcessLogsOptions {
  /** Resume strictly after the event with this cursor. Validated ({@link InvalidProcessCursorError}). */
  since?: string
  /** Include retained history (default `true`); `false` = only events from now on. */
  replay?: boolean
  /** Keep the stream open for live events until the terminal event (default `false`). */
  follow?: boolean
  /** Cancels this subscription only; the process keeps running. */
  signal?: AbortSignal
}

export type ProcessLogEvent =
  | { type: 'stdout' | 'stderr'; cursor: string; timestamp: string; data: Uint8Array }
  | { type: 'terminal'; state: 'exited'; cursor: string; timestamp: string; exit: ProcessExit }
  | { type: 'terminal'; state: 'error'; cursor: string; timestamp: string; error: ProcessFailure }
  /** The reader's position was evicted from the bounded log; the stream resumes at the oldest retained event. */
  | { type: 'truncated'; cursor?: string; timestamp: string }

export interface WaitForExitOptions {
  /** Local wait deadline in ms ({@link ProcessWaitTimeoutError}). */
  timeout?: number
  /** Cancels this wait only. */
  signal?: AbortSignal
}

export interface WaitForLogOptions {
  /** Default `'both'`. */
  stream?: 'stdout' | 'stderr' | 'both'
  /** Local wait deadline in ms ({@link ProcessWaitTimeoutError}). */
  timeout?: number
  signal?: AbortSignal
}

export interface WaitForLogResult {
  stream: 'stdout' | 'stderr'
  /** The decoded window (up to 64 KiB of that stream) that matched. */
  text: string
  /** The matched substring. */
  match: string
  /** The cursor of the event that completed the match. */
  cursor?: string
}

export interface WaitForPortOptions {
  /** `'tcp'` (default): the port accepts a connection. `'http'`: `GET path` answers a status in range. */
  mode?: 'tcp' | 'http'
  /** HTTP path, default `'/'`. */
  path?: string
  /** Wanted HTTP status or inclusive range; default `{ min: 200, max: 399 }`. */
  status?: number | { min: number; max: number }
  /** Poll interval in ms, default 500. */
  interval?: number
  /** Local deadline in ms ({@link ProcessReadyTimeoutError}); no default. */
  timeout?: number
  signal?: AbortSignal
}

/** A process started by {@link ProcessManager.exec} (or the Processes-API view of a spawned one). */
export declare class Process {
  private constructor()
  readonly id: string
  /** The OS pid of the root (also its process group id). */
  readonly pid: number
  /** Resolves with the exit code when the whole group has finished. */
  readonly exitCode: Promise<number>
  status(): Promise<ProcessStatus>
  /** A replayable, cursor-addressed stream of events. */
  logs(options?: ProcessLogsOptions): Promise<ReadableStream<ProcessLogEvent>>
  /** Buffers stdout and stderr until exit (or the local timeout). */
  output(options: ProcessOutputOptions & { encoding: 'utf8' }): Promise<ProcessOutput<string>>
  output(options?: ProcessOutputOptions): Promise<ProcessOutput<Uint8Array>>
  /** Waits until the whole process group has finished. */
  waitForExit(options?: WaitForExitOptions): Promise<ProcessExit>
  /**
   * Waits until stdout/stderr matches (`includes` for a string; a RegExp over a rolling 64 KiB
   * window). Exit first: {@link ProcessExitedBeforeLogError}.
   */
  waitForLog(pattern: string | RegExp, options?: WaitForLogOptions): Promise<WaitForLogResult>
  /** Polls until the port is ready. Exit first: {@link ProcessExitedBeforeReadyError}. */
  waitForPort(port: number, options?: WaitForPortOptions): Promise<void>
  /** Sends a numeric signal (1–64, default 15) to the whole group; never escalates. */
  kill(signal?: number): Promise<void>
}

// ---------------------------------------------------------------------------------------------
// The manager
// ---------------------------------------------------------------------------------------------

export declare class ProcessManager {
  constructor(options?: ProcessManagerOptions)
  /** The sandbox env layer (merged under each call's env). */
  env: Record<string, string | undefined>
  /** Absolute default working directory. */
  readonly workingDirectory: string

  /**
   * Runs `command` with `/bin/sh -c` in a new process group. Resolves with the handle once started,
   * before any output callback fires. A missing cwd rejects ({@link InvalidProcessCwdError},
   * message with ENOENT) and nothing is tracked; a missing command exits 127.
   */
  spawn(command: string, options?: SpawnProcessOptions): Promise<ProcessHandle>
  /** Every tracked handle, running or exited. */
  list(): Promise<ProcessInfo[]>
  /** The handle for `pid`, or `undefined`. The first `get` after exit returns it and forgets it. */
  get(pid: string): Promise<ProcessHandle | undefined>
  /** Kills the group, waits for exit, forgets the handle. `false` for an unknown pid. */
  kill(pid: string): Promise<boolean>
  /** Forgets a handle without touching its process. */
  release(pid: string): void

  /** Starts argv (no shell). Resolves once launched, not at exit. */
  exec(command: ProcessCommand, options?: ExecOptions): Promise<Process>
  /** The process with this id, or `null`; never throws for a missing one. */
  getProcess(id: string): Promise<Process | null>
  /** Running processes and the last 64 exited ones; `[]` once closed. */
  listProcesses(): Promise<ProcessStatus[]>
  /**
   * Kills every process of this manager and waits for them; afterwards every handle is stale
   * ({@link StaleProcessHandleError}) and new work is refused ({@link ProcessManagerClosedError}).
   */
  close(): Promise<void>
}

/** How many supervised processes are alive in this Node process (all managers, all threads). */
export declare function liveProcessCount(): number

// ---------------------------------------------------------------------------------------------
// Errors: every class has a stable `code` (on instances and on the class).
// ---------------------------------------------------------------------------------------------

/** Base class of procvisor's errors (except {@link InvalidProcessOptionError}, a RangeError). */
export declare class ProcessError extends Error {
  readonly code: string
}
/** `STALE_PROCESS_HANDLE`: the handle's manager was closed. */
export declare class StaleProcessHandleError extends ProcessError {
  readonly code: 'STALE_PROCESS_HANDLE'
  static readonly code: 'STALE_PROCESS_HANDLE'
}
/** `PROCESS_NOT_FOUND`: exported for parity with the Processes API; lookups return null/undefined instead. */
export declare class ProcessNotFoundError extends ProcessError {
  readonly code: 'PROCESS_NOT_FOUND'
  static readonly code: 'PROCESS_NOT_FOUND'
}
/** `PROCESS_WAIT_TIMEOUT`: a local wait (output, waitForExit, waitForLog, logs) ran out of time. */
export declare class ProcessWaitTimeoutError extends ProcessError {
  readonly code: 'PROCESS_WAIT_TIMEOUT'
  static readonly code: 'PROCESS_WAIT_TIMEOUT'
}
/** `PROCESS_ABORTED`: the caller's AbortSignal ended a wait or stream (the process keeps running). */
export declare class ProcessAbortedError extends ProcessError {
  readonly code: 'PROCESS_ABORTED'
  static readonly code: 'PROCESS_ABORTED'
}
/** `PROCESS_READY_TIMEOUT`: waitForPort's deadline passed. */
export declare class ProcessReadyTimeoutError extends ProcessError {
  readonly code: 'PROCESS_READY_TIMEOUT'
  static readonly code: 'PROCESS_READY_TIMEOUT'
}
/** `PROCESS_EXITED_BEFORE_READY`: the process ended before its port was ready. */
export declare class ProcessExitedBeforeReadyError extends ProcessError {
  readonly code: 'PROCESS_EXITED_BEFORE_READY'
  static readonly code: 'PROCESS_EXITED_BEFORE_READY'
}
/** `PROCESS_EXITED_BEFORE_LOG`: the process ended before its output matched. */
export declare class ProcessExitedBeforeLogError extends ProcessError {
  readonly code: 'PROCESS_EXITED_BEFORE_LOG'
  static readonly code: 'PROCESS_EXITED_BEFORE_LOG'
}
/** `INVALID_PROCESS_CWD`: the cwd does not exist, is not a directory, or cannot be entered. */
export declare class InvalidProcessCwdError extends ProcessError {
  readonly code: 'INVALID_PROCESS_CWD'
  static readonly code: 'INVALID_PROCESS_CWD'
}
/** `INVALID_PROCESS_ENVIRONMENT`: an env name is empty or holds `=`/NUL, or a value is not a string or holds NUL. */
export declare class InvalidProcessEnvironmentError extends ProcessError {
  readonly code: 'INVALID_PROCESS_ENVIRONMENT'
  static readonly code: 'INVALID_PROCESS_ENVIRONMENT'
}
/** `INVALID_PROCESS_CURSOR`: a cursor of another process, malformed, or from the future. */
export declare class InvalidProcessCursorError extends ProcessError {
  readonly code: 'INVALID_PROCESS_CURSOR'
  static readonly code: 'INVALID_PROCESS_CURSOR'
}
/** `PROCESS_SPAWN_FAILED`: the executable could not be started (not found, not executable, EMFILE, EAGAIN…). */
export declare class ProcessSpawnFailedError extends ProcessError {
  readonly code: 'PROCESS_SPAWN_FAILED'
  static readonly code: 'PROCESS_SPAWN_FAILED'
}
/** `INVALID_PROCESS_COMMAND`: an empty command, a non-string argument, or a NUL byte. */
export declare class InvalidProcessCommandError extends ProcessError {
  readonly code: 'INVALID_PROCESS_COMMAND'
  static readonly code: 'INVALID_PROCESS_COMMAND'
}
/** `INVALID_PROCESS_SIGNAL`: a signal that is not an integer from 1 to 64 (nothing was sent). */
export declare class InvalidProcessSignalError extends ProcessError {
  readonly code: 'INVALID_PROCESS_SIGNAL'
  static readonly code: 'INVALID_PROCESS_SIGNAL'
}
/** `PROCESS_MANAGER_CLOSED`: the manager was closed. */
export declare class ProcessManagerClosedError extends ProcessError {
  readonly code: 'PROCESS_MANAGER_CLOSED'
  static readonly code: 'PROCESS_MANAGER_CLOSED'
}
/** `PROCESS_ALREADY_EXITED`: stdin used after exit (`Process <pid> has already exited with code <n>`). */
export declare class ProcessAlreadyExitedError extends ProcessError {
  readonly code: 'PROCESS_ALREADY_EXITED'
  static readonly code: 'PROCESS_ALREADY_EXITED'
}
/** `PROCESS_STDIN_UNAVAILABLE`: stdin used on a process spawned with `stdinMode: 'ignore'`. */
export declare class ProcessStdinUnavailableError extends ProcessError {
  readonly code: 'PROCESS_STDIN_UNAVAILABLE'
  static readonly code: 'PROCESS_STDIN_UNAVAILABLE'
}
/** `PROCESS_STDIN_CLOSED`: a write after `closeStdin()`. */
export declare class ProcessStdinClosedError extends ProcessError {
  readonly code: 'PROCESS_STDIN_CLOSED'
  static readonly code: 'PROCESS_STDIN_CLOSED'
}
/** `PROCESS_STDIN_WRITE_FAILED`: the child closed its stdin (EPIPE) or the write failed. */
export declare class ProcessStdinWriteError extends ProcessError {
  readonly code: 'PROCESS_STDIN_WRITE_FAILED'
  static readonly code: 'PROCESS_STDIN_WRITE_FAILED'
}
/** `PROCESS_OUTPUT_TRUNCATED`: `handle.reader` fell behind the bounded log and output was lost. */
export declare class ProcessOutputTruncatedError extends ProcessError {
  readonly code: 'PROCESS_OUTPUT_TRUNCATED'
  static readonly code: 'PROCESS_OUTPUT_TRUNCATED'
}
/** `INVALID_PROCESS_OPTION`: an option of the wrong type or out of range. A RangeError. */
export declare class InvalidProcessOptionError extends RangeError {
  readonly code: 'INVALID_PROCESS_OPTION'
  static readonly code: 'INVALID_PROCESS_OPTION'
}
