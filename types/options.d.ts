/**
 * Options and values every face shares: the terminal of a `pty` process, resource limits,
 * signals, and the options of a manager.
 * Re-exported by `procvisor` (index.d.ts).
 * @module
 */
import type { InvalidProcessCwdError, InvalidProcessOptionError, InvalidProcessSignalError } from './errors'
import type { ProcessManager } from './manager'

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

/**
 * The `restart` option of `exec()` and `spawn()`: the process becomes a service, run again when
 * a run ends, as its policy says. Between two runs the whole tree of the first (its cgroup, or
 * its process group) is gone: what a run's root leaves behind is killed with the root's exit.
 * The next run is the same command, cwd, env and options, on the same handle: `status()` reports
 * `restarts`, the current `pid`, `lastExit`, and `state: 'backoff'` while it waits; `logs()` has a
 * `restart` event between runs; listeners see every run. `kill()` (any signal that ends a
 * process), the `timeout` (it bounds the whole service), `close()` and a sandbox's `stop()` end it
 * for good. Gap n before restart n is `min(initial × factor^(n-1), max)`. A bad value is an
 * {@link InvalidProcessOptionError} naming the field, before anything runs.
 */
export interface RestartOptions {
  /** `'on-failure'`: after a non-zero exit or a signal only. `'always'`: after every end, exit 0 too. */
  policy: 'on-failure' | 'always'
  /**
   * Restarts allowed (an integer ≥ 0; default 5). When the policy asks for one more, the service
   * ends with its last run's exit and `gaveUp: true`.
   */
  maxRestarts?: number
  /** The wait before each restart, in milliseconds: `initial` (100), growing by `factor` (2, at least 1) up to `max` (30000). */
  backoffMs?: { initial?: number; max?: number; factor?: number }
  /** A run that lasted this many milliseconds starts the count again (default 60000). */
  resetAfterMs?: number
}

/**
 * The timing every probe shares. A probe's verdict changes after `failureThreshold` failed
 * checks in a row, or after one that passes; each change is a `probe` event in `logs()`.
 */
export interface ProbeTiming {
  /** Milliseconds from the start of one check to the start of the next (positive; default 1000). */
  periodMs?: number
  /** Milliseconds one check may take before it counts as failed (positive; default 1000). */
  timeoutMs?: number
  /** Failed checks in a row that change the verdict (an integer ≥ 1; default 3). */
  failureThreshold?: number
  /** Milliseconds from the start of each run to its first check (default 0). */
  initialDelayMs?: number
}

/**
 * What a probe checks, on loopback (127.0.0.1, then ::1) where it connects. Exactly one of:
 * - `{ port }`: a TCP connection is accepted;
 * - `{ http: { port, path?, status? } }`: `GET path` (default `'/'`) answers `status`, or any
 *   status from 200 to 399 when it is not given;
 * - `{ log: pattern }`: the run's output (stdout or stderr) has matched `pattern`, a string: text
 *   to find, or `'/source/flags'` for a regular expression, matched in linear time (lookaround
 *   and backreferences are refused). Once matched it stays matched for the run;
 * - `{ exec: argv }`: the command (no shell; in the process's cwd, with its env) exits 0 within
 *   `timeoutMs`; past it, it is killed with everything it started.
 */
export type ProbeTarget =
  | {
      /** The port that must accept a connection, an integer 1–65535. */
      port: number
    }
  | {
      /** The HTTP check. */
      http: {
        /** The port, an integer 1–65535. */
        port: number
        /** The path, starting with `/`, without whitespace. Default `'/'`. */
        path?: string
        /** The one status that passes (100–999). Default: any from 200 to 399. */
        status?: number
      }
    }
  | {
      /** Text to find in the output, or `'/source/flags'` for a regular expression. */
      log: string
    }
  | {
      /** The command that must exit 0: executable, then arguments. */
      exec: readonly [executable: string, ...args: string[]]
    }

/**
 * The `readiness` and `liveness` options of `exec()` and `spawn()`: a {@link ProbeTarget} with
 * its {@link ProbeTiming}, checked by procvisor's own supervisor with each run (so in a persistent
 * sandbox with nobody attached too), from the run's start until its root exits; a process without
 * probes pays nothing for them.
 *
 * - `readiness`: `status().ready` is `false` until a check passes, then `true`; `false` again
 *   after `failureThreshold` failed checks in a row, at each new run of a service, and once the
 *   process has ended. It never ends the process.
 * - `liveness`: `status().healthy` is `true` until `failureThreshold` checks in a row have failed;
 *   then the run is ended as a shutdown ends it (its `shutdown` signal, else SIGTERM; SIGKILL after
 *   its `timeoutMs`, else `gracePeriod`), and `restart` decides what follows: for the policy the
 *   run failed, whatever its exit code. With a `readiness` probe too, liveness is checked only once
 *   the run has been ready, so that a slow start is not taken for a hang.
 *
 * A bad value (no target, two targets, an unknown key, a port out of range, a period that is not
 * positive, a pattern that cannot be matched in linear time) is an {@link InvalidProcessOptionError}
 * naming the field (`readiness.http.port`), before anything runs.
 */
export type ProbeOptions = ProbeTarget & ProbeTiming

/**
 * The `shutdown` option of `exec()` and `spawn()`: how `close()`, a sandbox's `stop()`,
 * `stop()` and a spawned handle's `kill()` without a signal end the process: `signal` to the
 * whole tree, then SIGKILL once `timeoutMs` has passed (sent by procvisor's supervisor, with
 * nobody attached too). The outcome is a kill. Without `shutdown` they send SIGKILL at once. A
 * bad value is an {@link InvalidProcessOptionError} naming the field, before anything runs.
 */
export interface ShutdownOptions {
  /** The signal that asks the process to end ({@link ProcessSignal}). Default `'SIGTERM'`. */
  signal?: ProcessSignal
  /** Milliseconds it has to end before SIGKILL (≥ 0). Default 5000. */
  timeoutMs?: number
}

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
  /**
   * A directory where every process of this manager also writes its output log, so that logs
   * outlive the 1 MiB kept in memory: `<logDirectory>/<process id>.log` (stdout and stderr with
   * their sequence numbers and timestamps, restart, probe and exit events), rotated at
   * {@link logMaxBytes} to `.log.1`, `.log.2`… with {@link logKeep} files kept. `logs()` from the
   * start or `since` a cursor that memory no longer holds reads on through the files without a
   * gap or a repeat; older than the oldest kept file, it gets `truncated` first. Relative to
   * {@link workingDirectory}; created if missing. Not a directory, or no file can be created in
   * it: {@link InvalidProcessOptionError}. A write error later (a full disk) stops disk logging
   * for that process only, with one note on stderr; the process and its output go on. Output
   * reaches the files within 50 ms, and at once at the process's end; output that rotation would
   * delete before it could be read (a flood past `(logKeep + 1) × logMaxBytes`) is not written.
   */
  logDirectory?: string
  /** The size in bytes at which a process's log file rotates: an integer from 4096; default 4 MiB. Needs {@link logDirectory}. */
  logMaxBytes?: number
  /** How many files of a process's log are kept, the current one included: an integer from 1 to 10,000; default 5. Needs {@link logDirectory}. */
  logKeep?: number
}
