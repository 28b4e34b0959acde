/**
 * The Processes API: argv launches ({@link ProcessManager.exec}), exits, statuses, cursor logs,
 * readiness waits, and {@link Process}.
 * Re-exported by `procvisor` (index.d.ts).
 * @module
 */
import type {
  InvalidProcessCursorError,
  InvalidProcessCwdError,
  InvalidProcessEnvironmentError,
  InvalidProcessOptionError,
  InvalidProcessSignalError,
  ProcessAbortedError,
  ProcessAlreadyExitedError,
  ProcessExitedBeforeLogError,
  ProcessExitedBeforeReadyError,
  ProcessNoTerminalError,
  ProcessReadyTimeoutError,
  ProcessWaitTimeoutError,
  StaleProcessHandleError,
} from './errors'
import type { ProcessManager } from './manager'
import type { ProbeOptions, ProcessLimits, ProcessSignal, RestartOptions, ShutdownOptions, TerminalOptions } from './options'

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
  /** Runs it again when it ends, with backoff (a service; see {@link RestartOptions}). */
  restart?: RestartOptions
  /** What tells that a run is ready to serve: `status().ready` and `probe` events (see {@link ProbeOptions}). */
  readiness?: ProbeOptions
  /** What tells that a run is still healthy; one that is not is ended (see {@link ProbeOptions}). */
  liveness?: ProbeOptions
  /** How `close()` and `stop()` end it: a signal, then SIGKILL (see {@link ShutdownOptions}). */
  shutdown?: ShutdownOptions
  /**
   * A name for the process, unique among the manager's live processes: 1 to 64 characters of
   * `A-Z a-z 0-9 . _ -`, not all digits (so it never reads as a pid). {@link InvalidProcessOptionError}
   * for a bad one or one a running process holds (nothing is started); free again once that
   * process has exited. Shown in `status()` and the listings, and accepted wherever its pid or id is
   * (`getProcess(name)`, and `get`/`kill` of a spawn). A service keeps it across restarts.
   */
  name?: string
}

/** How the root process ended (the outcome of the group is its root's). */
export interface ProcessExit {
  /** Exit code, or 128 + signal number when a signal ended the root. */
  code: number
  /** The number of the signal that ended the root; absent when it exited by itself. */
  signal?: number
  /** `true` when the `timeout` option ended the process. */
  timedOut: boolean
  /** From {@link Process.waitForExit} of a service (launched with `restart`): its restarts. */
  restarts?: number
  /** From {@link Process.waitForExit} of a service: it ended because `maxRestarts` was reached. */
  gaveUp?: boolean
}


/** The fields every {@link ProcessStatus} has. */
interface ProcessStatusBase {
  /** The process id in its manager ({@link Process.id}). */
  id: string
  /** The `name` it was started with; absent when it was given none. */
  name?: string
  /** The OS pid of the root (also its process group id). */
  pid: number
  /** The argv that was started; `['/bin/sh', '-c', command]` for a `spawn`. */
  command: ProcessCommand
  /** The absolute working directory the process was started in. */
  cwd?: string
  /** When the process was started, as an ISO 8601 string. */
  startedAt: string
  /** `true` when it runs on a pseudo-terminal (started with `pty`); absent otherwise. */
  pty?: true
  /** CPU time of the whole process tree in milliseconds (cgroup containment only; final once exited). */
  cpuTimeMs?: number
  /** Peak memory of the tree in bytes, where the cgroup's memory controller is enabled. */
  memoryPeakBytes?: number
  /**
   * Memory in use now, in bytes, while it runs: the tree's (`memory.current` of its cgroup), else
   * its root's resident set (Linux); absent once it ended and between a service's runs.
   */
  memoryBytes?: number
  /** A service (launched with `restart`): its restarts so far (since a run that lasted `resetAfterMs`). */
  restarts?: number
  /** A service: how the last run that ended, ended (once one has). */
  lastExit?: ProcessExit
  /** A service that has exited: `true` when it ended because `maxRestarts` was reached. */
  gaveUp?: boolean
  /**
   * Launched with `readiness` ({@link ProbeOptions}): the current run passed its probe. `false`
   * before the first check passes, between runs and once the process has ended.
   */
  ready?: boolean
  /**
   * Launched with `liveness` ({@link ProbeOptions}): `false` once the current run failed its probe
   * `failureThreshold` times in a row (it is being ended); `true` before the first check.
   */
  healthy?: boolean
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
      /** A service between two runs, waiting out its backoff; `pid` is the last run's. */
      state: 'backoff'
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
  | /** A service's run ended and the next one follows, after its backoff. */
    {
      /** Between two runs of a service (launched with `restart`). */
      type: 'restart'
      /** The restart's number: 1 for the first. */
      attempt: number
      /** How the run that ended, ended. */
      exit: ProcessExit
      /** This event's position; pass it as `since` to resume after it. */
      cursor: string
      /** When the run's tree was gone, as an ISO 8601 string. */
      timestamp: string
    }
  | /** A probe's verdict changed (launched with `readiness` or `liveness`; see {@link ProbeOptions}). */
    {
      /** A readiness probe passed or stopped passing, or a liveness probe failed. */
      type: 'probe'
      /** Which probe. */
      probe: 'readiness' | 'liveness'
      /**
       * `true`: the run is ready (readiness). `false`: it is no longer ready, or (liveness) it
       * failed `failureThreshold` checks in a row and is being ended.
       */
      ok: boolean
      /** What the last check saw, e.g. `'3 failures in a row; GET http://localhost:3000/health: HTTP status 500 is outside 200-399'`. */
      reason: string
      /** This event's position; pass it as `since` to resume after it. */
      cursor: string
      /** When the verdict changed, as an ISO 8601 string. */
      timestamp: string
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
  /** The `name` it was started with, or `undefined`. */
  readonly name: string | undefined
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
   * Ends the process as `close()` would: through its `shutdown` option ({@link ShutdownOptions}:
   * its signal, then SIGKILL after its `timeoutMs`), or SIGKILL at once without one; a service
   * ends for good. Resolves with the exit once the whole tree is gone, like
   * {@link Process.waitForExit}.
   */
  stop(): Promise<ProcessExit>
  /**
   * A service's next run, now: the current run is ended as a failed liveness probe ends it (its
   * `shutdown` signal, else SIGTERM; SIGKILL after its timeout) without ending the service, and
   * the next run starts at once, whatever the policy says of that exit, counted in `restarts`.
   * Resolves with the status once it runs. Without `restart`: {@link InvalidProcessOptionError};
   * after the end: {@link ProcessAlreadyExitedError}.
   */
  restart(): Promise<ProcessStatus>
  /**
   * Sets the window size of the process's terminal (started with `pty`); the kernel sends SIGWINCH
   * to its foreground job. `cols` and `rows` are integers 1–65535, else
   * {@link InvalidProcessOptionError}; without a terminal {@link ProcessNoTerminalError}; after
   * the exit {@link ProcessAlreadyExitedError}.
   */
  resize(cols: number, rows: number): Promise<void>
}
