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
 * The terminal of a process started with `pty`. Other values: {@link InvalidProcessOptionError}.
 * A terminal of {@link ProcessManager.createTerminal} also keeps a screen, which bounds its window
 * to 1,048,576 cells (`cols × rows`); one from `pty` keeps none and takes any size.
 */
export interface TerminalOptions {
  /** Columns, an integer 1–65535. Default 80. */
  cols?: number
  /** Rows, an integer 1–65535. Default 24. */
  rows?: number
  /**
   * `TERM` for the process (letters, digits and `. _ + -`), unless the manager's or the call's
   * `env` sets one. Default `'xterm-256color'`.
   */
  term?: string
}

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

type WithoutSig<S> = S extends `SIG${infer Name}` ? Name : never

/**
 * A signal, wherever one is taken: its number (an integer 1–64), its name as Node spells it
 * (`'SIGTERM'`), or the name without the prefix (`'TERM'`). Names are upper case and mean this
 * platform's numbers (`'SIGUSR1'` is 10 on Linux, 30 on macOS). Anything else, a name this
 * platform lacks (`'SIGINFO'` on Linux) included, rejects with {@link InvalidProcessSignalError}
 * naming it, and nothing is sent.
 */
export type ProcessSignal = number | NodeJS.Signals | WithoutSig<NodeJS.Signals>

/** Constructor options of {@link ProcessManager}. */
export interface ProcessManagerOptions {
  /**
   * The sandbox environment: every process gets `{ PATH: process.env.PATH, ...env, ...callEnv }`
   * and nothing else from `process.env`. A name set to `undefined` is dropped.
   */
  env?: Record<string, string | undefined>
  /**
   * Default working directory of every process; a relative `cwd` resolves against it. Defaults
   * to `process.cwd()`; a relative value is resolved once, at construction. Not a string, or
   * absent or relative while Node's own working directory is gone (deleted):
   * {@link InvalidProcessCwdError}. An absolute one works then.
   */
  workingDirectory?: string
  /**
   * How processes are contained. `'cgroup'`: each process tree in a cgroup v2 of its own, so that
   * `kill`, timeouts, `close()` and Node's death reach descendants that left the process group
   * (`setsid`, `setpgid`, job control, a double fork), the process is `running` until the last
   * of them is gone, and `cpuTimeMs` is measured. Needs a writable cgroup v2 directory: a
   * delegated cgroup (`systemd-run --user --scope -p Delegate=yes node app.js`) or root; without
   * one it is an {@link InvalidProcessOptionError} saying why. `'process-group'`: process groups
   * only. `'auto'` (default): `'cgroup'` where available, else `'process-group'`.
   */
  containment?: 'auto' | 'cgroup' | 'process-group'
}

// ---------------------------------------------------------------------------------------------
// Mastra surface
// ---------------------------------------------------------------------------------------------

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
}

/** What {@link ProcessManager.list} returns per tracked handle. */
export interface ProcessInfo {
  /** The OS pid, as a string. */
  pid: string
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
   * SIGKILL to the whole process group (and tree, under cgroup containment); resolves `true` at
   * once (without waiting for the exit) when the signal reached a process, `false` if the process
   * had already exited or nothing was left to reach. With a `signal` ({@link ProcessSignal}: 1–64,
   * `'SIGTERM'`, `'TERM'`) sends that signal instead. Any other `signal` rejects with
   * {@link InvalidProcessSignalError}, even after exit.
   */
  kill(signal?: ProcessSignal): Promise<boolean>
  /**
   * Writes to stdin (a string as UTF-8; a `Uint8Array` is copied); resolves once written. Writes and
   * `closeStdin()` reach the child in call order, even without awaiting. Rejects with
   * {@link ProcessAlreadyExitedError} after exit, {@link ProcessStdinUnavailableError} with
   * `stdinMode: 'ignore'`, {@link ProcessStdinClosedError} after `closeStdin()`, and
   * {@link ProcessStdinWriteError} when the child closed its stdin (EPIPE).
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
  /**
   * Sets the window size of the process's terminal (started with `pty`); the kernel sends SIGWINCH
   * to its foreground job. `cols` and `rows` are integers 1–65535, else
   * {@link InvalidProcessOptionError}; without a terminal {@link ProcessNoTerminalError}; after
   * the exit {@link ProcessAlreadyExitedError}.
   */
  resize(cols: number, rows: number): Promise<void>
}

// ---------------------------------------------------------------------------------------------
// Processes API
// ---------------------------------------------------------------------------------------------

/** argv: the executable, then its arguments, each passed as is (no shell). */
export type ProcessCommand = readonly [executable: string, ...args: string[]]

/** Options of {@link ProcessManager.exec}. */
export interface ExecOptions {
  /**
   * Working directory, absolute or relative to the manager's (the default); must exist and be a
   * directory ({@link InvalidProcessCwdError}).
   */
  cwd?: string
  /**
   * Environment overlay for this launch only, over the manager's `env`; `undefined` drops a name.
   * Names non-empty, without `=` or NUL; values strings without NUL ({@link InvalidProcessEnvironmentError}).
   */
  env?: Record<string, string | undefined>
  /**
   * Lifetime in milliseconds: SIGTERM to the group, SIGKILL after `gracePeriod`; the exit then
   * has `timedOut: true`. `0` or omitted: no timeout. A fraction rounds up.
   */
  timeout?: number
  /** Milliseconds between the timeout's SIGTERM and SIGKILL. Default 1000. */
  gracePeriod?: number
  /** Resource limits for this process (see {@link ProcessLimits}). */
  limits?: ProcessLimits
  /**
   * Runs the process on a pseudo-terminal of its own (see {@link TerminalOptions}): it leads a new
   * session whose controlling terminal is its stdin, stdout and stderr, and everything it writes
   * arrives as stdout (`\n` as `\r\n`, typed input echoed). `true` for 80×24 `xterm-256color`.
   */
  pty?: boolean | TerminalOptions
}

/** How the root process ended (the outcome of the group is its root's). */
export interface ProcessExit {
  /** Exit code, or 128 + signal number when a signal ended the root. */
  code: number
  /** The number of the signal that ended the root; absent when it exited by itself. */
  signal?: number
  /** `true` when the `timeout` option ended the process. */
  timedOut: boolean
}


/** The fields every {@link ProcessStatus} has. */
interface ProcessStatusBase {
  /** The process id in its manager ({@link Process.id}). */
  id: string
  /** The OS pid of the root (also its process group id). */
  pid: number
  /** The argv that was started; `['/bin/sh', '-c', command]` for a `spawn`. */
  command: ProcessCommand
  /** The absolute working directory the process was started in. */
  cwd?: string
  /** When the process was started, as an ISO 8601 string. */
  startedAt: string
  /** CPU time of the whole process tree in milliseconds (cgroup containment only; final once exited). */
  cpuTimeMs?: number
  /** Peak memory of the tree in bytes, where the cgroup's memory controller is enabled. */
  memoryPeakBytes?: number
}

/**
 * A snapshot of one process. `running` until the root has exited and the whole tree is gone (its process group, or its
 * cgroup under cgroup containment);
 * then `exited`, with the root's outcome.
 */
export type ProcessStatus =
  | (ProcessStatusBase & {
      /** The root is alive, or a process of its group still is. */
      state: 'running'
    })
  | (ProcessStatusBase & {
      /** The root has exited and its group is empty. */
      state: 'exited'
      /** When the last process of the group was gone, as an ISO 8601 string. */
      endedAt: string
      /** How the root ended. */
      exit: ProcessExit
    })

/** The result of {@link Process.output}: the output of the whole run and the exit. */
export interface ProcessOutput<T = Uint8Array> {
  /** Everything the process wrote to stdout that the output log still held (up to `maxBytes`). */
  stdout: T
  /** Everything the process wrote to stderr that the output log still held (up to `maxBytes`). */
  stderr: T
  /** The root's exit code, or 128 + signal number ({@link ProcessExit.code}; a timeout is not 124 here). */
  exitCode: number
  /** The number of the signal that ended the root; absent when it exited by itself. */
  signal?: number
  /** `true` when the `timeout` option of `exec` / `spawn` ended the process. */
  timedOut: boolean
  /**
   * `maxBytes` cut something, or the bounded output log (1 MiB and 10,000 events per process)
   * had evicted the oldest output before it was read.
   */
  truncated: boolean
}

/** Options of {@link Process.output}. */
export interface ProcessOutputOptions {
  /** Decode as UTF-8 (invalid bytes become U+FFFD). Default: bytes. */
  encoding?: 'utf8'
  /** Cap per stream, in bytes (non-negative, finite; a fraction rounds down). No cap by default. */
  maxBytes?: number
  /**
   * Local wait deadline in milliseconds ({@link ProcessWaitTimeoutError}); the process keeps
   * running. `0` polls: the result if the process is over, else the error at once.
   */
  timeout?: number
  /** Cancels this wait only ({@link ProcessAbortedError}); the process keeps running. */
  signal?: AbortSignal
}

/** Options of {@link Process.logs}. */
export interface ProcessLogsOptions {
  /**
   * Resume strictly after the event with this cursor. A cursor that is malformed, of another
   * process, or from the future rejects with {@link InvalidProcessCursorError}.
   */
  since?: string
  /** Include retained history (default `true`); `false`: only events logged after the call. */
  replay?: boolean
  /**
   * `true`: keep the stream open for live events until the terminal event. `false` (default):
   * deliver the events logged so far, then close.
   */
  follow?: boolean
  /**
   * Cancels this subscription only (the stream errors with {@link ProcessAbortedError}); the
   * process keeps running.
   */
  signal?: AbortSignal
}

/**
 * One event of a process's output log, in order. Every event but `truncated` has a `cursor`:
 * pass it as `since` to resume after it. Cursors are opaque and belong to one process.
 */
export type ProcessLogEvent =
  | /** A chunk of output. */
    {
      /** Which stream the chunk came from. */
      type: 'stdout' | 'stderr'
      /** This event's position; pass it as `since` to resume after it. */
      cursor: string
      /** When the chunk was read, as an ISO 8601 string. */
      timestamp: string
      /** The raw bytes, as read (a chunk may end inside a line or a UTF-8 character). */
      data: Uint8Array
    }
  | /** The last event: the process tree is gone. The stream closes after it. */
    {
      /** The last event of the log. */
      type: 'terminal'
      /** The process exited. */
      state: 'exited'
      /** This event's position; pass it as `since` to resume after it. */
      cursor: string
      /** When the process group was gone, as an ISO 8601 string. */
      timestamp: string
      /** How the root ended. */
      exit: ProcessExit
    }
  | /** The reader's position was evicted from the bounded log; the stream resumes at the oldest retained event. */
    {
      /** Events between the reader's position and the next event were lost. */
      type: 'truncated'
      /** The position just before the oldest retained event. */
      cursor?: string
      /** When the loss was noticed, as an ISO 8601 string. */
      timestamp: string
    }

/** Options of {@link Process.waitForExit}. */
export interface WaitForExitOptions {
  /**
   * Local wait deadline in milliseconds ({@link ProcessWaitTimeoutError}); the process keeps
   * running. `0` polls: the exit if the process is over, else the error at once.
   */
  timeout?: number
  /** Cancels this wait only ({@link ProcessAbortedError}); the process keeps running. */
  signal?: AbortSignal
}

/** Options of {@link Process.waitForLog}. */
export interface WaitForLogOptions {
  /** Which stream to search: `'stdout'`, `'stderr'` or `'both'` (default; each searched on its own). */
  stream?: 'stdout' | 'stderr' | 'both'
  /**
   * Local wait deadline in milliseconds ({@link ProcessWaitTimeoutError}); the process keeps
   * running. `0` on a process that is over searches its output; on a live one it fails at once.
   */
  timeout?: number
  /** Cancels this wait only ({@link ProcessAbortedError}); the process keeps running. */
  signal?: AbortSignal
}

/** The result of {@link Process.waitForLog}. */
export interface WaitForLogResult {
  /** The stream whose output matched. */
  stream: 'stdout' | 'stderr'
  /** The decoded window (up to 64 KiB of that stream) that matched. */
  text: string
  /** The matched substring. */
  match: string
  /** The cursor of the event that completed the match. */
  cursor?: string
}

/** Options of {@link Process.waitForPort}. */
export interface WaitForPortOptions {
  /** `'tcp'` (default): the port accepts a connection. `'http'`: `GET path` answers a status in range. */
  mode?: 'tcp' | 'http'
  /** HTTP path, default `'/'`; must start with `/` and hold no whitespace. */
  path?: string
  /** Wanted HTTP status or inclusive range (each 100–999); default `{ min: 200, max: 399 }`. */
  status?: number | /** An inclusive range. */ {
    /** Lowest accepted HTTP status. */
    min: number
    /** Highest accepted HTTP status. */
    max: number
  }
  /** Milliseconds between probes, default 500. */
  interval?: number
  /**
   * Local deadline in milliseconds ({@link ProcessReadyTimeoutError}); the process keeps running.
   * No default: without it the wait lasts until the port is ready or the process ends. `0` times
   * out without probing.
   */
  timeout?: number
  /** Cancels this wait only ({@link ProcessAbortedError}); the process keeps running. */
  signal?: AbortSignal
}

/**
 * A process started by {@link ProcessManager.exec} (or the Processes-API view of a spawned one).
 * Observing is not controlling: a timeout or abort of any wait ends the wait, never the process.
 * Every method rejects with {@link StaleProcessHandleError} once the manager is closed.
 */
export declare class Process {
  /** Not constructible: processes come from {@link ProcessManager.exec} and {@link ProcessManager.getProcess}. */
  private constructor()
  /** The process id in its manager: stable, the key of {@link ProcessManager.getProcess}, and named in its log cursors. */
  readonly id: string
  /** The OS pid of the root (also its process group id). */
  readonly pid: number
  /**
   * Resolves with the exit code (128 + signal number when a signal ended the root) once the whole
   * group has finished, like {@link Process.waitForExit}; also after `close()` (137: SIGKILL). Read
   * it only when needed: once read, the pending promise keeps Node alive until the process ends.
   */
  readonly exitCode: Promise<number>
  /** A snapshot: `running` until the root has exited and the whole tree is gone, then `exited`. */
  status(): Promise<ProcessStatus>
  /**
   * A replayable, cursor-addressed stream of events from the bounded output log (1 MiB and
   * 10,000 events per process). A reader that falls behind gets one `truncated` event and goes on
   * from the oldest retained event; readers never slow the process down. Rejects with
   * {@link InvalidProcessCursorError} for a bad `since` and {@link ProcessAbortedError} when
   * `signal` is already aborted.
   */
  logs(options?: ProcessLogsOptions): Promise<ReadableStream<ProcessLogEvent>>
  /**
   * Waits until the whole group has finished, then resolves with its output, decoded as UTF-8.
   * See the overload below.
   */
  output(options: ProcessOutputOptions & {
    /** Decode stdout and stderr as UTF-8 strings. */
    encoding: 'utf8'
  }): Promise<ProcessOutput<string>>
  /**
   * Waits until the whole group has finished, then resolves with its stdout and stderr (bytes, or
   * strings with `encoding: 'utf8'`) and the exit. The output comes from the bounded log, so a
   * long run keeps only its newest 1 MiB / 10,000 events (`truncated: true`). Rejects with
   * {@link ProcessWaitTimeoutError} or {@link ProcessAbortedError}; the process keeps running.
   */
  output(options?: ProcessOutputOptions): Promise<ProcessOutput<Uint8Array>>
  /**
   * Waits until the root has exited and the whole tree is gone; resolves with the
   * root's outcome. Rejects with {@link ProcessWaitTimeoutError} or {@link ProcessAbortedError};
   * the process keeps running.
   */
  waitForExit(options?: WaitForExitOptions): Promise<ProcessExit>
  /**
   * Waits until stdout/stderr matches, searching from the start of the retained output (so
   * output printed before the call counts): `includes` for a string; a RegExp (flags `g`/`y`
   * ignored) over a rolling 64 KiB window. Exit first: {@link ProcessExitedBeforeLogError}; also
   * {@link ProcessWaitTimeoutError}, {@link ProcessAbortedError}.
   */
  waitForLog(pattern: string | RegExp, options?: WaitForLogOptions): Promise<WaitForLogResult>
  /**
   * Probes `port` (an integer 1–65535) on loopback (127.0.0.1, then ::1) every `interval` until it
   * is ready; any listener on that port counts. Exit first: {@link ProcessExitedBeforeReadyError};
   * deadline passed: {@link ProcessReadyTimeoutError} (the message says what the last probe saw);
   * also {@link ProcessAbortedError}.
   */
  waitForPort(port: number, options?: WaitForPortOptions): Promise<void>
  /**
   * Sends a signal ({@link ProcessSignal}: 1–64, `'SIGTERM'`, `'TERM'`; default SIGTERM) to the
   * whole group and resolves once sent, without waiting for the exit; never escalates. After exit
   * it resolves and sends nothing. Any other `signal` rejects with {@link InvalidProcessSignalError}.
   */
  kill(signal?: ProcessSignal): Promise<void>
  /**
   * Sets the window size of the process's terminal (started with `pty`); the kernel sends SIGWINCH
   * to its foreground job. `cols` and `rows` are integers 1–65535, else
   * {@link InvalidProcessOptionError}; without a terminal {@link ProcessNoTerminalError}; after
   * the exit {@link ProcessAlreadyExitedError}.
   */
  resize(cols: number, rows: number): Promise<void>
}

// ---------------------------------------------------------------------------------------------
// The manager
// ---------------------------------------------------------------------------------------------

/**
 * Starts and tracks processes. Both faces share one registry: {@link ProcessManager.spawn} /
 * `list` / `get` / `kill` / `release` (Mastra's `SandboxProcessManager`) and
 * {@link ProcessManager.exec} / `getProcess` / `listProcesses` (the Processes API). Every process
 * gets exactly `{ PATH: process.env.PATH, ...manager env, ...call env }` as its environment.
 */
export declare class ProcessManager {
  /**
   * Checks `options` and fixes the working directory; starts nothing. A bad `env` throws
   * {@link InvalidProcessEnvironmentError}, a non-string `workingDirectory`
   * {@link InvalidProcessCwdError}, a non-object `options` {@link InvalidProcessOptionError}.
   */
  constructor(options?: ProcessManagerOptions)
  /** The sandbox env layer (merged under each call's env). Assign or mutate it: later launches use it. */
  env: Record<string, string | undefined>
  /** Absolute default working directory. */
  readonly workingDirectory: string
  /** How this manager contains its processes, `'auto'` resolved (see {@link ProcessManagerOptions.containment}). */
  readonly containment: 'cgroup' | 'process-group'

  /**
   * Runs `command` with `/bin/sh -c` in a new process group. Resolves with the handle once started,
   * before any output callback fires. A missing cwd rejects ({@link InvalidProcessCwdError},
   * message with ENOENT) and nothing is tracked; a missing command exits 127. Also rejects with
   * {@link InvalidProcessCommandError} (empty or NUL), {@link InvalidProcessOptionError},
   * {@link InvalidProcessEnvironmentError}, {@link ProcessSpawnFailedError} (the OS refused:
   * EMFILE, EAGAIN…) and {@link ProcessManagerClosedError}.
   */
  spawn(command: string, options?: SpawnProcessOptions): Promise<ProcessHandle>
  /** Every tracked handle, running or exited (until released, killed through the manager, or read by `get` after exit). */
  list(): Promise<ProcessInfo[]>
  /** The handle for `pid`, or `undefined`. The first `get` after exit returns it and forgets it. */
  get(pid: string): Promise<ProcessHandle | undefined>
  /**
   * SIGKILL (or `signal`, a {@link ProcessSignal}) to the group of `pid`, waits for the exit,
   * forgets the handle. Resolves `true` if it was running, `false` if it had already exited (still
   * forgotten) or the pid is unknown. A bad `signal` rejects with {@link InvalidProcessSignalError}.
   * A signal the process survives leaves the call waiting for its exit: send those with
   * `handle.kill(signal)`.
   */
  kill(pid: string, signal?: ProcessSignal): Promise<boolean>
  /** Forgets a handle without touching its process; the handle keeps working. No-op for an unknown pid. */
  release(pid: string): void

  /**
   * Starts argv (no shell) in a new process group, with stdin at EOF (`/dev/null`). Resolves once
   * launched, not at exit. Rejects with {@link InvalidProcessCommandError},
   * {@link InvalidProcessCwdError}, {@link InvalidProcessEnvironmentError},
   * {@link InvalidProcessOptionError}, {@link ProcessSpawnFailedError} (program not found or not
   * executable, EMFILE, EAGAIN…) or {@link ProcessManagerClosedError}; nothing is left running.
   */
  exec(command: ProcessCommand, options?: ExecOptions): Promise<Process>
  /**
   * The process with this id (from `exec`, or {@link ProcessHandle.id} of a spawn), the same
   * object every call, or `null` when unknown, no longer kept, or the manager is closed; never
   * throws for a missing one.
   */
  getProcess(id: string): Promise<Process | null>
  /** The status of the running processes and the last 64 exited ones, oldest start first; `[]` once closed. */
  listProcesses(): Promise<ProcessStatus[]>
  /**
   * Starts `command` (default `['/bin/sh']`) on a pseudo-terminal of its own and resolves with
   * its {@link Terminal} once it runs. Bad values reject as for `exec` (`cols` / `rows` / `term`
   * as in {@link TerminalOptions}); nothing is started then. The screen holds every cell of the
   * window, so `cols × rows` is at most 1,048,576 (1024 × 1024, 65535 × 16), else
   * {@link InvalidProcessOptionError}.
   */
  createTerminal(options?: CreateTerminalOptions): Promise<Terminal>
  /** The terminal with this id, the same object every call, or `null` (unknown, no longer kept, closed manager, not a terminal). */
  getTerminal(id: string): Promise<Terminal | null>
  /** The status of the running terminals and of those exited that are still kept; `[]` once closed. */
  listTerminals(): Promise<ProcessStatus[]>
  /**
   * Kills every process of this manager and waits for them; afterwards every handle is stale
   * ({@link StaleProcessHandleError}) and new work is refused ({@link ProcessManagerClosedError}).
   * Idempotent.
   */
  close(): Promise<void>
}

/** Options of {@link ProcessManager.createTerminal}: what runs, where, and the window. */
export interface CreateTerminalOptions extends TerminalOptions {
  /** The program and its arguments (no shell). Default `['/bin/sh']`, interactive on the terminal. */
  command?: ProcessCommand
  /** Working directory, absolute or relative to the manager's (the default). */
  cwd?: string
  /** Environment over the manager's; `undefined` drops a name. `TERM` defaults to `term`. */
  env?: Record<string, string | undefined>
  /** Lifetime in milliseconds, as for `exec`. */
  timeout?: number
  /** Milliseconds between the timeout's SIGTERM and SIGKILL. Default 1000. */
  gracePeriod?: number
  /** Resource limits (see {@link ProcessLimits}). */
  limits?: ProcessLimits
}

/** What a terminal shows, rendered from its output by a terminal emulator. Rows and columns are 0-based. */
export interface TerminalSnapshot {
  /** Columns of the window. */
  cols: number
  /** Rows of the window. */
  rows: number
  /** One string per row of the window, trailing blanks removed. */
  lines: string[]
  /** Where the cursor is. */
  cursor: { row: number; col: number }
  /**
   * The window title the program set (`ESC ] 2 ; … BEL`), `''` if none; at most 4 KiB (cut at a
   * character). The screen drops an OSC string longer than 8 KiB whole (a title past that is
   * never set); the output is not filtered.
   */
  title: string
}

/**
 * A program on a pseudo-terminal of its own, from {@link ProcessManager.createTerminal}. It is a
 * process like any other (`getProcess(id)`, kill, `close()`, containment and the watchdog
 * apply); its output is the terminal's, everything it printed.
 */
export declare class Terminal {
  private constructor()
  /** The id (also its process id, and the id in its cursors). */
  readonly id: string
  /** The OS pid of the program: the leader of the terminal's session and of its process group. */
  readonly pid: number
  /** ProcessStatus of the program. */
  status(): Promise<ProcessStatus>
  /**
   * Types raw bytes (a string as UTF-8): `'\r'` is Enter, `'\x03'` Ctrl-C, `'\x04'` EOF at the
   * start of a line. Resolves once written; writes keep their order. After the exit
   * {@link ProcessAlreadyExitedError}.
   */
  write(data: string | Uint8Array): Promise<void>
  /**
   * Sets the window size (integers 1–65535 with `cols × rows` at most 1,048,576 cells, else
   * {@link InvalidProcessOptionError}, and nothing changes); the foreground job gets SIGWINCH and
   * the snapshot follows. After the exit {@link ProcessAlreadyExitedError}.
   */
  resize(cols: number, rows: number): Promise<void>
  /**
   * The output as a stream of `stdout` events (then one `terminal` event at the exit), each with
   * a cursor: `since` resumes right after one, with no gap or repeat. As {@link Process.logs}.
   */
  output(options?: ProcessLogsOptions): Promise<ReadableStream<ProcessLogEvent>>
  /** Waits until the program and everything it started have exited. As {@link Process.waitForExit}. */
  waitForExit(options?: WaitForExitOptions): Promise<ProcessExit>
  /** Waits until the output matches `pattern`. As {@link Process.waitForLog}. */
  waitForLog(pattern: string | RegExp, options?: WaitForLogOptions): Promise<WaitForLogResult>
  /**
   * SIGINT to the terminal's foreground process group (the job in front, not the shell behind
   * it); `false` when it reached no process. After the exit {@link ProcessAlreadyExitedError}.
   */
  interrupt(): Promise<boolean>
  /**
   * Sends a signal ({@link ProcessSignal}, default SIGTERM) to the program's process group and to
   * every process of the terminal's session; resolves once sent, never escalates.
   */
  kill(signal?: ProcessSignal): Promise<void>
  /** SIGKILL to every process of the terminal's session; resolves with the exit once all are gone. */
  terminate(): Promise<ProcessExit>
  /** What the terminal shows now (also after the exit: its last screen). */
  getSnapshot(): Promise<TerminalSnapshot>
}

/** How many supervised processes are alive in this Node process (all managers, all threads). */
export declare function liveProcessCount(): number

// ---------------------------------------------------------------------------------------------
// Errors: every class has a stable `code` (on instances and on the class).
// ---------------------------------------------------------------------------------------------

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
