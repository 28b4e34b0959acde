/**
 * The Mastra surface: {@link ProcessManager.spawn}'s options and results and
 * {@link ProcessHandle}, behaving as Mastra's `SandboxProcessManager` does.
 * Re-exported by `procvisor` (index.d.ts).
 * @module
 */
import type { Readable, Writable } from 'node:stream'
import type {
  InvalidProcessCwdError,
  InvalidProcessOptionError,
  InvalidProcessSignalError,
  ProcessAlreadyExitedError,
  ProcessNoTerminalError,
  ProcessOutputTruncatedError,
  ProcessStdinClosedError,
  ProcessStdinUnavailableError,
  ProcessStdinWriteError,
  ProcessStdinBacklogError,
  StaleProcessHandleError,
} from './errors'
import type { ProcessManager } from './manager'
import type { ProbeOptions, ProcessLimits, ProcessSignal, RestartOptions, ShutdownOptions, TerminalOptions } from './options'
import type {
  Process,
  ProcessExit,
  ProcessLogEvent,
  ProcessLogsOptions,
  ProcessOutput,
  ProcessOutputOptions,
  ProcessStatus,
  WaitForExitOptions,
  WaitForLogOptions,
  WaitForLogResult,
  WaitForPortOptions,
} from './processes-api'

/** Options of {@link ProcessManager.spawn} (Mastra's `SpawnProcessOptions`, plus limits). */
export interface SpawnProcessOptions {
  /**
   * Lifetime in milliseconds: on expiry the group gets SIGTERM, then SIGKILL after `gracePeriod`;
   * the exit code is 124 and `stderr` ends with `\nProcess timed out after <N>ms`. `0` or omitted:
   * no timeout. A fraction rounds up to the next millisecond; negative, `NaN` or `Infinity` is an
   * {@link InvalidProcessOptionError}.
   */
  timeout?: number
  /** Environment for this process, over the manager's. `undefined` drops a name. */
  env?: Record<string, string | undefined>
  /**
   * Working directory: absolute, or relative to the manager's working directory (the default).
   * Missing or not a directory: the spawn rejects with {@link InvalidProcessCwdError}.
   */
  cwd?: string
  /** Receives every decoded stdout chunk (a split UTF-8 character arrives whole), for the handle's lifetime. */
  onStdout?: (data: string) => void
  /** Receives every decoded stderr chunk, for the handle's lifetime. */
  onStderr?: (data: string) => void
  /** Aborting kills the process (SIGKILL to the group); already aborted kills it at once. */
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
  /** Resource limits for this process (see {@link ProcessLimits}). */
  limits?: ProcessLimits
  /**
   * Runs the process on a pseudo-terminal of its own (see {@link TerminalOptions}): it leads a new
   * session whose controlling terminal is its stdin, stdout and stderr, and everything it writes
   * arrives as stdout (`\n` as `\r\n`, typed input echoed). `true` for 80×24 `xterm-256color`.
   */
  pty?: boolean | TerminalOptions
  /**
   * Runs this argv (executable, then arguments) without a shell instead of `/bin/sh -c command`;
   * `command` is then only the label shown by `list()`. Used for isolation wrappers.
   */
  argv?: readonly string[]
  /**
   * Runs it again when it ends, with backoff (a service; see {@link RestartOptions}). The
   * handle's `pid` stays the first run's (it is the handle's key); `status().pid` is the current
   * run's. `wait()` resolves when the service ends for good.
   */
  restart?: RestartOptions
  /** What tells that a run is ready to serve: `status().ready` and `probe` events (see {@link ProbeOptions}). */
  readiness?: ProbeOptions
  /** What tells that a run is still healthy; one that is not is ended (see {@link ProbeOptions}). */
  liveness?: ProbeOptions
  /** How `kill()` without a signal, `close()` and `stop()` end it: a signal, then SIGKILL (see {@link ShutdownOptions}). */
  shutdown?: ShutdownOptions
  /**
   * A name for the process, unique among the manager's live processes: 1 to 64 characters of
   * `A-Z a-z 0-9 . _ -`, not all digits (so it never reads as a pid). {@link InvalidProcessOptionError}
   * for a bad one or one a running process holds (nothing is started); free again once that
   * process has exited. Shown in `status()` and the listings, and accepted wherever its pid or id is
   * (`get(name)`, `kill(name)`, `getProcess(name)`). A service keeps it across restarts.
   */
  name?: string
}

/** What {@link ProcessManager.list} returns per tracked handle. */
export interface ProcessInfo {
  /** The OS pid, as a string. */
  pid: string
  /** The `name` it was spawned with; absent when it was given none. */
  name?: string
  /** The command string given to `spawn`. */
  command?: string
  /** `true` until the process has exited and its output is drained (until `exitCode` is set). */
  running: boolean
  /** Set once exited: the process's code, 124 after a timeout, 128 when killed by a signal. */
  exitCode?: number
  /** CPU time of the whole process tree in milliseconds (cgroup containment only; final once exited). */
  cpuTimeMs?: number
  /** Peak memory of the tree in bytes, where the cgroup's memory controller is enabled. */
  memoryPeakBytes?: number
}

/** The result of {@link ProcessHandle.wait}. */
export interface CommandResult {
  /** `exitCode === 0`. */
  success: boolean
  /** The process's code; 124 on timeout; 128 when killed by a signal. */
  exitCode: number
  /** Retained stdout text: the newest `maxRetainedBytes` bytes of UTF-8. */
  stdout: string
  /** Retained stderr text; on timeout it ends with `\nProcess timed out after <N>ms`. */
  stderr: string
  /** Fractional milliseconds from spawn until the process exited and its output was drained. */
  executionTimeMs: number
  /** `true` when the spawn `timeout` ended the process; absent otherwise. */
  timedOut?: boolean
  /** `true` when a signal ended the process (a kill, an abort, a crash) or the timeout did; absent otherwise. */
  killed?: boolean
  /** `true` when older stdout was dropped to stay within `maxRetainedBytes`; absent otherwise. */
  stdoutTruncated?: boolean
  /** `true` when older stderr was dropped to stay within `maxRetainedBytes`; absent otherwise. */
  stderrTruncated?: boolean
  /** Bytes of stdout dropped from the retained text; present only when some were. */
  stdoutDroppedBytes?: number
  /** Bytes of stderr dropped from the retained text; present only when some were. */
  stderrDroppedBytes?: number
  /** The command line; set by Mastra's `executeCommand`, not by {@link ProcessHandle.wait}. */
  command?: string
  /** The arguments; part of Mastra's `CommandResult`, not set by {@link ProcessHandle.wait}. */
  args?: string[]
  /** A service (spawned with `restart`): its restarts; the rest of the result is its last run's. */
  restarts?: number
  /** A service: `true` when it ended because `maxRestarts` was reached. */
  gaveUp?: boolean
}

/** Options of {@link ProcessHandle.wait}. */
export interface WaitOptions {
  /** Receives stdout chunks until this wait settles. */
  onStdout?: (data: string) => void
  /** Receives stderr chunks until this wait settles. */
  onStderr?: (data: string) => void
  /** Aborting kills the process (SIGKILL to the group); the wait then settles with its result. */
  abortSignal?: AbortSignal
}

/**
 * A process started by {@link ProcessManager.spawn}: Mastra's `ProcessHandle`, plus the
 * Processes-API readiness and log methods (both are views of the same process).
 */
export declare class ProcessHandle {
  /** Not constructible: handles come from {@link ProcessManager.spawn} (`new` throws {@link InvalidProcessOptionError}). */
  private constructor()
  /** The OS pid (also the process group id), as a decimal string. */
  readonly pid: string
  /** The id of this process in the Processes API (`getProcess(id)`, log cursors). */
  readonly id: string
  /** The `name` it was spawned with, or `undefined`. */
  readonly name: string | undefined
  /** `undefined` while running; the exit code once exited and drained (124 timeout, 128 signal). */
  readonly exitCode: number | undefined
  /** The command string (set by the manager; writable). */
  command: string | undefined
  /** Retained stdout text so far (the newest `maxRetainedBytes` bytes, never splitting a code point). */
  readonly stdout: string
  /** Retained stderr text so far; after a timeout it ends with `\nProcess timed out after <N>ms`. */
  readonly stderr: string
  /** `true` once older stdout has been dropped to stay within `maxRetainedBytes`. */
  readonly stdoutTruncated: boolean
  /** `true` once older stderr has been dropped to stay within `maxRetainedBytes`. */
  readonly stderrTruncated: boolean
  /** Bytes of stdout dropped from the retained text so far (`0` when nothing was). */
  readonly stdoutDroppedBytes: number
  /** Bytes of stderr dropped from the retained text so far (`0` when nothing was). */
  readonly stderrDroppedBytes: number
  /**
   * Waits until the process has exited and all its output reached the listeners; the same result
   * every call. Keeps working after the handle was released or its manager closed (after `close()`
   * it resolves with the kill's result, exit code 128). An aborted `abortSignal` kills the process.
   */
  wait(options?: WaitOptions): Promise<CommandResult>
  /**
   * SIGKILL to the whole process group (and tree, under cgroup containment), or, when spawned
   * with `shutdown`, its signal with SIGKILL after its `timeoutMs` ({@link ShutdownOptions}: the
   * call Mastra's own stop makes); resolves `true` at once (without waiting for the exit) when the
   * signal reached a process, `false` if the process had already exited or nothing was left to
   * reach. With a `signal` ({@link ProcessSignal}: 1–64, `'SIGTERM'`, `'TERM'`) sends that signal
   * instead. Any other `signal` rejects with {@link InvalidProcessSignalError}, even after exit.
   */
  kill(signal?: ProcessSignal): Promise<boolean>
  /**
   * Writes to stdin (a string as UTF-8; a `Uint8Array` is copied); resolves once written. Writes and
   * `closeStdin()` reach the child in call order, even without awaiting. Rejects with
   * {@link ProcessAlreadyExitedError} after exit, {@link ProcessStdinUnavailableError} with
   * `stdinMode: 'ignore'`, {@link ProcessStdinClosedError} after `closeStdin()`, and
   * {@link ProcessStdinWriteError} when the child closed its stdin (EPIPE), and
   * {@link ProcessStdinBacklogError} when 16 MiB written before are still unread (nothing of
   * this write is sent: await earlier writes before sending more).
   */
  sendStdin(data: string | Uint8Array): Promise<void>
  /**
   * Sends EOF on stdin once the writes made before it are done. Idempotent while running; rejects
   * with {@link ProcessAlreadyExitedError} after exit and {@link ProcessStdinUnavailableError}
   * with `stdinMode: 'ignore'`.
   */
  closeStdin(): Promise<void>
  /**
   * stdout as a Node Readable (created on first use, replays retained output, ends at exit). It
   * loses nothing: while it is not read, the child is held back (as with a paused
   * `child_process` stream), and a reader first used in the turn that receives the handle (right
   * after `await spawn(...)`) gets stdout from its first byte, however fast the child writes.
   * That turn is the one in which `spawn()`'s own promise settles, which `Promise.all` over
   * several spawns may delay by turns: make each reader in a `.then` on its own spawn. Created later, after output was already evicted from the bounded log, it errors with
   * {@link ProcessOutputTruncatedError} rather than skip bytes silently. Chunks are Buffers of up
   * to 256 KiB, one queued at a time (`highWaterMark: 0`). Once the process is dead, a reader that
   * has taken nothing for 2 s no longer holds it unfinished: output the bounded log could not keep
   * for it is lost, and its next read then fails with {@link ProcessOutputTruncatedError}.
   */
  readonly reader: Readable
  /** stdin as a Node Writable; `end()` closes stdin. */
  readonly writer: Writable
  /**
   * {@link Process.status} of this process (its `command` is `['/bin/sh', '-c', command]`, or the
   * `argv` option). Rejects with {@link StaleProcessHandleError} once the manager is closed, as do
   * `logs`, `output` and the `waitFor…` methods below.
   */
  status(): Promise<ProcessStatus>
  /** {@link Process.logs} of this process. */
  logs(options?: ProcessLogsOptions): Promise<ReadableStream<ProcessLogEvent>>
  /** {@link Process.output} of this process, decoded as UTF-8. */
  output(options: ProcessOutputOptions & {
    /** Decode stdout and stderr as UTF-8 strings. */
    encoding: 'utf8'
  }): Promise<ProcessOutput<string>>
  /** {@link Process.output} of this process, as bytes (or strings with `encoding: 'utf8'`). */
  output(options?: ProcessOutputOptions): Promise<ProcessOutput<Uint8Array>>
  /** {@link Process.waitForExit} of this process. */
  waitForExit(options?: WaitForExitOptions): Promise<ProcessExit>
  /** {@link Process.waitForLog} of this process. */
  waitForLog(pattern: string | RegExp, options?: WaitForLogOptions): Promise<WaitForLogResult>
  /** {@link Process.waitForPort} of this process, e.g. `handle.waitForPort(3000)` after `spawn('npm run dev')`. */
  waitForPort(port: number, options?: WaitForPortOptions): Promise<void>
  /** {@link Process.stop} of this process: through its `shutdown`, resolving with the exit. */
  stop(): Promise<ProcessExit>
  /** {@link Process.restart} of this process: a service's next run, now. */
  restart(): Promise<ProcessStatus>
  /**
   * Sets the window size of the process's terminal (started with `pty`); the kernel sends SIGWINCH
   * to its foreground job. `cols` and `rows` are integers 1–65535, else
   * {@link InvalidProcessOptionError}; without a terminal {@link ProcessNoTerminalError}; after
   * the exit {@link ProcessAlreadyExitedError}.
   */
  resize(cols: number, rows: number): Promise<void>
}
