/**
 * procvisor/mastra: procvisor as the process backend of Mastra's `LocalSandbox`.
 *
 * One line swaps it into a Mastra app:
 *
 * ```ts
 * import { NativeLocalSandbox as LocalSandbox } from 'procvisor/mastra'
 *
 * const workspace = new Workspace({ sandbox: new LocalSandbox({ workingDirectory: './ws' }) })
 * ```
 *
 * The classes extend the base classes of the application's own `@mastra/core/workspace`
 * (`>= 1.71.0`, optional: procvisor lists it in `peerDependencies`); importing `procvisor/mastra`
 * without it installed throws an error that says so. `procvisor` itself never loads `@mastra/core`.
 *
 * The ES module entry builds the classes over Mastra's ES module build; the CommonJS entry over
 * its CommonJS build (loaded on first use of an export). Use the entry that matches how the
 * application imports `@mastra/core`, so `instanceof LocalSandbox` holds.
 * @module
 */
import type {
  CommandResult,
  ExecuteCommandOptions,
  LocalSandbox as MastraLocalSandbox,
  MastraSandbox,
  ProcessHandle,
  ProcessInfo,
  SandboxCloneOptions,
  SandboxInfo,
  SandboxProcessManager,
  SandboxStartOptions,
  SpawnProcessOptions,
} from '@mastra/core/workspace'
import type { ProbeOptions, ProcessHandle as ProcvisorProcessHandle, ProcessSignal, RestartOptions, ShutdownOptions, TerminalOptions, StackConfig, StackUpOptions, StackUpResult, StackDownResult } from '../index'
import type { NativeLocalSandboxOptions, NativeStartResult, NativeCheckpointReport } from './options'
export { SandboxSnapshotError, SandboxSupervisorLostError, SandboxProtocolError, SandboxAccessError } from '../index'
export type { NativeLocalSandboxOptions, NativeStartResult, NativeCheckpointReport } from './options'
import type { SandboxTerminals } from './terminals'
export type { SandboxTerminals, SandboxTerminalOptions } from './terminals'
import type { SandboxCheckpoints } from './checkpoints'
export type { SandboxCheckpoints, CheckpointCaptured, CheckpointListed, CheckpointRestored } from './checkpoints'
export { createProcessTools } from './tools'
export type { ProcessTools, ProcessToolShapes, ProcessToolsOptions, TerminalScreenResult, EndedBeforeWait } from './tools'

/**
 * procvisor's API of the process under a {@link NativeProcessHandle} (its `nativeHandle`), the
 * same whichever side runs it: every member of procvisor's `ProcessHandle` (`waitForPort`,
 * `waitForLog`, `logs` with cursors, `output`, `status`, `waitForExit`, `kill(signal)`, `reader`,
 * `writer`, stdin, `resize`). procvisor keeps no text of its own for it: `exitCode`, `stdout`,
 * `stderr`, the truncation fields and the text of `wait()` are the Mastra handle's.
 *
 * In a persistent sandbox it speaks to the supervisor. The supervisor keeps the log, so a cursor
 * seen in one Node process resumes in another (`logs({ since: cursor })`), and `reader` reads
 * that log from its first byte. A `signal` ends a wait in this Node process only; the
 * supervisor's wait ends with its own `timeout` or with the process.
 */
export interface NativeHandle extends ProcvisorProcessHandle {}

/**
 * Mastra's `ProcessHandle` over one procvisor process, in this Node process or, in a persistent
 * sandbox, under its supervisor.
 *
 * - `pid`: the OS pid (also the process group id) in decimal.
 * - `exitCode`: `undefined` while running; the process's own code after exit, `124` after a
 *   timeout (`timedOut: true`, stderr ends with `\nProcess timed out after <N>ms`), `128` when
 *   killed by a signal (`killed: true`), `1` when the process could not be supervised.
 * - `stdout` / `stderr`, truncation fields, listeners, `reader` / `writer`: Mastra's base class,
 *   fed incrementally (a UTF-8 character split across two reads arrives whole).
 * - `wait()`: resolves after the process exited and all its output was delivered; the same
 *   result every call. For a service (spawned with `restart`): once it ended for good, with its
 *   last run's exit, plus `restarts` and `gaveUp`.
 */
export declare class NativeProcessHandle extends ProcessHandle {
  /** @internal Created by {@link NativeProcessManager.spawn}. */
  constructor(options?: SpawnProcessOptions)
  /** The OS pid, in decimal (also the process group id). */
  readonly pid: string
  /** The `name` it was spawned with, or `undefined`. */
  readonly name: string | undefined
  /** `undefined` while running (and until all output was delivered), then the exit code. */
  readonly exitCode: number | undefined
  /** procvisor's API of the same process: see {@link NativeHandle}. */
  readonly nativeHandle: NativeHandle
  /**
   * SIGKILL to the whole process group. `false` if the process had already exited; otherwise
   * `true`, without waiting for the exit. Safe to call twice. procvisor extension: a `signal`
   * (1–64, `'SIGTERM'`, `'TERM'`: a {@link ProcessSignal}) sends that signal to the group instead.
   */
  kill(signal?: ProcessSignal): Promise<boolean>
  /**
   * Writes to stdin; resolves once written; writes stay in order. Rejects after exit
   * (`Process <pid> has already exited with code <n>`) and when spawned with `stdinMode: 'ignore'`.
   */
  sendStdin(data: string): Promise<void>
  /** Sends EOF on stdin. Idempotent; rejects after exit or when stdin was ignored. */
  closeStdin(): Promise<void>
  /**
   * Sets the window size of the process's terminal (spawned with `pty`); its foreground job gets
   * SIGWINCH. Rejects with procvisor's `ProcessNoTerminalError` without a terminal,
   * `ProcessAlreadyExitedError` after exit, `InvalidProcessOptionError` for sizes outside 1–65535.
   */
  resize(cols: number, rows: number): Promise<void>
  /**
   * Waits for exit and drained output. Listeners given here are removed when it settles; an
   * abort kills the process. The same result every call.
   */
  wait(options?: {
    /** Receives decoded stdout chunks until this wait settles. */
    onStdout?: (data: string) => void
    /** Receives decoded stderr chunks until this wait settles. */
    onStderr?: (data: string) => void
    /** Aborting kills the process (SIGKILL to the group); the wait then settles with its result. */
    abortSignal?: AbortSignal
  }): Promise<CommandResult & { restarts?: number; gaveUp?: boolean }>
}

/**
 * Mastra's `SandboxProcessManager`, starting processes with procvisor. Mastra's base class does
 * the rest (ensureRunning, the `setEnv` overlay under per-call env, abort signals, tracking,
 * prune-on-read `get`, `kill`, `release`).
 *
 * `spawn(command)` runs `/bin/sh -c command` in a new process group with exactly
 * `{ PATH: process.env.PATH, ...sandbox env, ...options.env }` (no other `process.env`), in the
 * sandbox working directory (a relative `cwd` resolves against it; a missing one rejects with
 * `ENOENT`). Under `LocalSandbox` isolation (`'bwrap'` / `'seatbelt'`) it runs the argv from
 * `sandbox.wrapCommandForIsolation(command)` without a shell, as Mastra does. On `timeout` the
 * group gets SIGTERM, then SIGKILL one second later.
 *
 * Usable on its own in any `MastraSandbox`: `new MySandbox({ processes: new NativeProcessManager() })`.
 *
 * In a persistent sandbox ({@link NativeLocalSandboxOptions.persistent}) the sandbox's
 * supervisor starts and keeps the processes, and this manager speaks to it: `list()` and
 * `get(pid)` also see the processes that other Node processes started. Its handles are
 * {@link NativeProcessHandle}s there too, with the same members and answers.
 */
export declare class NativeProcessManager<TSandbox extends MastraSandbox = MastraLocalSandbox> extends SandboxProcessManager<TSandbox> {
  /**
   * Starts nothing. Mastra's base class keeps `env`; {@link NativeLocalSandbox} passes its own
   * `env` option here.
   */
  constructor(options?: {
    /**
     * Environment of every process, under the per-call `env`, used when the sandbox has no
     * `buildEnv` (outside a `LocalSandbox`); inside one, the sandbox builds the environment.
     * `undefined` drops a name.
     */
    env?: Record<string, string | undefined>
  })
  /**
   * Starts `command` and resolves with its handle once it runs, before any output callback
   * fires; Mastra's base class first starts the sandbox if needed (`ensureRunning`) and then
   * tracks the handle. `timeout` is in milliseconds (exit code 124); `maxRetainedBytes` defaults
   * to 1 MiB, and a bad value is a RangeError before anything runs. A missing `cwd` rejects with
   * `InvalidProcessCwdError` from `procvisor` (`ENOENT`); a command that is not found exits 127.
   */
  spawn(
    command: string,
    options?: SpawnProcessOptions & {
      /**
       * procvisor extension: run on a pseudo-terminal of its own (`true`: 80×24
       * `xterm-256color`). Its output arrives as stdout; `sendStdin` types into it; `resize` sets
       * its size. See procvisor's `TerminalOptions`.
       */
      pty?: boolean | TerminalOptions
      /**
       * procvisor extension: run it again when it ends, with backoff (a service; see procvisor's
       * `RestartOptions`), e.g. `{ policy: 'on-failure', maxRestarts: 5 }` for a dev server. In a
       * persistent sandbox its supervisor restarts it with nobody attached. The handle's `pid`
       * stays the first run's (its key for `get()`); `nativeHandle.status()` has the current
       * `pid`, `restarts`, `lastExit` and `state: 'backoff'` between runs.
       */
      restart?: RestartOptions
      /**
       * procvisor extension: what tells that a run is ready to serve (see procvisor's
       * `ProbeOptions`), e.g. `{ http: { port: 3000, path: '/health' } }`: `nativeHandle.status()`
       * has `ready`, `nativeHandle.logs()` a `probe` event when it changes. Checked by the
       * sandbox's own supervisor when it is persistent, with nobody attached too.
       */
      readiness?: ProbeOptions
      /**
       * procvisor extension: what tells that a run is still healthy; one that fails its checks is
       * ended and `restart` decides what follows (see procvisor's `ProbeOptions`).
       */
      liveness?: ProbeOptions
      /**
       * procvisor extension: how `kill()` without a signal and the sandbox's `stop()` end it: a
       * signal (default SIGTERM), then SIGKILL after `timeoutMs` (default 5000; see procvisor's
       * `ShutdownOptions`). Without it they send SIGKILL at once.
       */
      shutdown?: ShutdownOptions
      /**
       * procvisor extension: a name, unique among the sandbox's live processes (in a persistent
       * sandbox, its supervisor's, whichever Node process spawned them): 1 to 64 characters of
       * `A-Z a-z 0-9 . _ -`, not all digits. `InvalidProcessOptionError` for a bad one or one a
       * running process holds, before anything runs; free again once that process has exited.
       * `list()` entries have it (only when given), and `get(name)` / `kill(name)` find the
       * process, as do the command line and the agent tools. A service keeps it across restarts.
       */
      name?: string
    },
  ): Promise<NativeProcessHandle>
  /**
   * Every tracked process, running or exited, with its `command`. In a persistent sandbox:
   * every process of its supervisor, whichever Node process started it (`[]` while not attached).
   * Of the exited ones neither released nor read, the newest 1000 are kept (in this Node process
   * and in the supervisor alike); older ones are forgotten, and `get()` no longer finds them.
   */
  list(): Promise<ProcessInfo[]>
  /**
   * A tracked handle (Mastra's rule: an exited one is pruned on read, and `list()` leaves it out
   * from then on; in a persistent sandbox, in this object, while the supervisor keeps it for other
   * Node processes and for the handle's `nativeHandle`). In a persistent sandbox,
   * also a process another Node process started, or this one before a restart: the handle
   * begins with the output the supervisor kept (the last `maxRetainedBytes` of each stream, 1 MiB
   * by default; the truncation counters start from zero), and `wait()`, `kill()`, `sendStdin()`,
   * `closeStdin()`, `reader` and `writer` work on it. `undefined` when the sandbox has no such
   * process. Every handle has `nativeHandle`. `pid` may also be a process's `name`.
   */
  get(pid: string): Promise<NativeProcessHandle | undefined>
  /**
   * Mastra's kill: SIGKILL to the process, its exit waited for, the handle released; `false` for
   * an unknown pid. procvisor extensions: `pid` may be a process's `name`; a `signal` ({@link ProcessSignal}) is sent instead; the
   * exit is still waited for, so send a signal the process survives with `handle.kill(signal)`.
   */
  kill(pid: string, signal?: ProcessSignal): Promise<boolean>
  /**
   * procvisor extension: starts each process of the stack that is not running by its name (in a
   * persistent sandbox: among its supervisor's), in dependency order, each once its `dependsOn`
   * conditions are met. A bad config rejects with `InvalidProcessOptionError` before anything
   * runs; a dependency that can never meet its condition with `ProcessExitedBeforeReadyError`
   * naming both, and nothing after it starts.
   */
  up(config: StackConfig, options?: StackUpOptions): Promise<StackUpResult>
  /**
   * procvisor extension: stops the running processes of the stack (default: the last one brought
   * up here) in the reverse of the start order, each through its `shutdown`; resolves once each has exited.
   */
  down(config?: StackConfig, options?: StackUpOptions): Promise<StackDownResult>
}

/**
 * Mastra's `LocalSandbox` with {@link NativeProcessManager} as `processes`. Takes every
 * `LocalSandboxOptions`; everything else (lifecycle, mounts, isolation, instructions, `setEnv`) is
 * Mastra's `LocalSandbox`, with three additions:
 *
 * - **A lifetime** (`timeoutMs`): see {@link NativeLocalSandboxOptions.timeoutMs}.
 * - **Native checkpoints.** Every capture and restore (`snapshot()`, the restore in `start()`,
 *   `snapshotOnStop`) runs in procvisor's native copier, off the JS thread, in Mastra's layout
 *   (`checkpointsDirectory/<name>`, copied to a temporary sibling and renamed into place), so a
 *   checkpoint of Mastra's `LocalSandbox` restores here and the reverse. Modes, mtimes, empty
 *   directories and symlinks (as links, never followed) are kept; sockets and FIFOs are skipped
 *   and reported ({@link NativeLocalSandbox.lastCheckpoint}), as is an entry a process removes
 *   while a capture reads the tree (`vanished`: left out, not a failure); sparse files stay sparse (Linux);
 *   any depth is copied. Several sandboxes may capture one checkpoint name at once: the last
 *   complete capture wins, and a restore meanwhile reads one whole capture. A failure rejects with
 *   `SandboxSnapshotError` naming the path, and leaves the previous checkpoint intact (a failed
 *   restore leaves the working directory empty).
 * - **Reconnect by id.** A second object with the same `id` and working directory, started while
 *   the first runs in this Node process, joins it: `start()` resolves `{ outcome: 'connected' }`
 *   (as Mastra reports for an existing working directory), `processes.list()` / `get(pid)` /
 *   `kill(pid)` see the same processes with their output so far, and the lifetime is the running
 *   sandbox's. Stopping or destroying either stops both (each runs its own `onStop` hook). A
 *   different `id` is a different sandbox.
 * - **Persistent sandboxes** (`persistent: true`): the same, across Node processes. The processes
 *   run under a supervisor of the sandbox's own, and a `start()` in another Node process attaches
 *   to them (`outcome: 'connected'`): see {@link NativeLocalSandboxOptions.persistent}.
 */
export declare class NativeLocalSandbox extends MastraLocalSandbox {
  /**
   * Mastra's `LocalSandbox` constructor, with the same options and `timeoutMs` /
   * `snapshotOnStop` / `persistent`; starts nothing. A bad `timeoutMs`, `snapshotOnStop` or
   * `persistent`, or `persistent` without `id`, throws `InvalidProcessOptionError` (code
   * `INVALID_PROCESS_OPTION`), and so does a `checkpointsDirectory` that is the working directory
   * or inside it (compared as absolute paths with links resolved), where a capture would copy
   * itself. A relative
   * `workingDirectory` or `checkpointsDirectory` is made absolute here, against `process.cwd()`,
   * so `workingDirectory` reads absolute; when Node's own working directory is gone, an absent or
   * relative one throws `InvalidProcessCwdError` (code `INVALID_PROCESS_CWD`).
   */
  constructor(options?: NativeLocalSandboxOptions)
  /**
   * The sandbox's process manager, bound to this sandbox: it follows the sandbox's working
   * directory, environment (including `setEnv`) and isolation. Objects joined by id share its
   * tracked processes.
   */
  readonly processes: NativeProcessManager<MastraLocalSandbox>
  /**
   * Programs on terminals of their own, started like the sandbox's processes and ended with it;
   * in a persistent sandbox kept by its supervisor. See {@link SandboxTerminals}.
   */
  readonly terminals: SandboxTerminals
  /**
   * Named checkpoints of the working directory: captures that share unchanged files with the
   * last one, and restores in place that write only what differs. See {@link SandboxCheckpoints}.
   */
  readonly checkpoints: SandboxCheckpoints
  /**
   * The maximum lifetime from `start()` in milliseconds, if one was given; with `persistent`,
   * always set (300000 unless given).
   */
  readonly timeoutMs: number | undefined
  /** Whether the processes run under a supervisor of their own and outlive this Node process. */
  readonly persistent: boolean
  /** The pid of a persistent sandbox's supervisor while this object is attached to it. */
  readonly supervisorPid: number | undefined
  /**
   * With `persistent`, while attached: `'started'` when this object's `start()` started the
   * supervisor, `'joined'` when one was serving already (started by another Node process or
   * object). Independent of `start()`'s `outcome`: a supervisor started over an existing working
   * directory is `outcome: 'connected'` with `supervisor === 'started'`. `undefined` otherwise.
   */
  readonly supervisor: 'started' | 'joined' | undefined
  /** Whether `stop()` captures the working directory as this sandbox's checkpoint. */
  readonly snapshotOnStop: boolean
  /**
   * The checkpoint restored on `start()` and captured by `snapshot()`: `checkpointName`, or with
   * `snapshotOnStop` one made from `id`; `undefined` when there is none.
   */
  readonly checkpointName: string | undefined
  /**
   * When the running sandbox's lifetime ends; `undefined` when it is not running or has none.
   * With `persistent`, the supervisor's end of life (set by whichever `start()` started it),
   * while attached.
   */
  readonly expiresAt: Date | undefined
  /** What the last capture or restore by this object did; `undefined` before the first. */
  readonly lastCheckpoint: NativeCheckpointReport | undefined
  /**
   * Mastra's `start()`: always resolves with the outcome ({@link NativeStartResult}); with
   * `persistent`, {@link NativeLocalSandbox.supervisor} then says whether the supervisor was
   * started or joined.
   */
  start(options?: SandboxStartOptions): Promise<NativeStartResult>
  /** Mastra's `_start()`, the same as {@link NativeLocalSandbox.start}. */
  _start(options?: SandboxStartOptions): Promise<NativeStartResult>
  /**
   * Mastra's built-in `executeCommand` over `this.processes`: args POSIX-quoted onto the command
   * line, stdin ignored, all output retained unless `maxRetainedBytes` is given, the handle
   * released afterwards (`processes.list()` stays empty), `command` set to the full command line.
   */
  executeCommand(command: string, args?: string[], options?: ExecuteCommandOptions): Promise<CommandResult>
  /**
   * Mastra's `snapshot()` (the same result), with the copy done natively: captures to
   * `checkpointName`, a no-op without one; captures run one at a time. Rejects with
   * `SandboxSnapshotError`, the previous checkpoint then intact.
   */
  snapshot(): Promise<void>
  /**
   * Mastra's `stop()` (every process killed, mounts unmounted), then the capture when
   * `snapshotOnStop` is set. Objects joined to the same running sandbox are stopped too. With
   * `persistent`, the supervisor ends first, with every process of the sandbox, whichever Node
   * process started them; the other attached objects' next call rejects with
   * `SandboxSupervisorLostError`.
   */
  stop(): Promise<void>
  /**
   * Mastra's `destroy()`, then the checkpoints this `id` captured are deleted: only those it
   * captured itself (recorded in `checkpointsDirectory/.owner-<name>`) and that nobody captured
   * over since. `_destroy()` on a sandbox never started deletes them too. With `persistent`, the
   * supervisor ends first, with every process, as in `stop()`.
   */
  destroy(): Promise<void>
  /**
   * Lets go of a persistent sandbox without stopping it: its processes run on until its lifetime
   * ends, `status` becomes `'stopped'` here, and a later `start()` (here or in another Node
   * process) attaches again. Rejects with `InvalidProcessOptionError` on a sandbox that is not
   * persistent (`stop()` ends that one).
   */
  detach(): Promise<void>
  /**
   * Mastra's `getInfo()`; while a lifetime runs, `timeoutAt` (a Date, Mastra's field for it) and
   * `metadata.expiresAt` (ISO 8601) say when it ends.
   */
  getInfo(): Promise<SandboxInfo>
  /**
   * `LocalSandbox.clone()` that returns a `NativeLocalSandbox` (same fields as Mastra's, plus
   * `timeoutMs` and `snapshotOnStop`; a clone with another id captures under its own name). A
   * persistent sandbox's clone is persistent too, under the `id` given, else `<id>-<8 hex>`.
   */
  clone(options?: SandboxCloneOptions): NativeLocalSandbox
}

/** Alias of {@link NativeLocalSandbox}, for `import { LocalSandbox } from 'procvisor/mastra'`. */
export declare const LocalSandbox: typeof NativeLocalSandbox
/** The instance type of {@link NativeLocalSandbox}, so `LocalSandbox` also works as a type. */
export type LocalSandbox = NativeLocalSandbox

/** Mastra's `shellQuote`: `[a-zA-Z0-9._-/=:@]+` passes unchanged, anything else is single-quoted. */
export declare function shellQuote(arg: string): string

/**
 * Builds the classes over a given `@mastra/core/workspace` module. `procvisor/mastra` calls it
 * for you; call it only to target another copy of Mastra (for example one a bundler inlined).
 */
export declare function defineMastraClasses(workspace: typeof import('@mastra/core/workspace')): {
  /** {@link NativeProcessHandle}, extending that module's `ProcessHandle`. */
  NativeProcessHandle: typeof NativeProcessHandle
  /** {@link NativeProcessManager}, extending that module's `SandboxProcessManager`. */
  NativeProcessManager: typeof NativeProcessManager
  /** {@link NativeLocalSandbox}, extending that module's `LocalSandbox`. */
  NativeLocalSandbox: typeof NativeLocalSandbox
  /** The same class as `NativeLocalSandbox`. */
  LocalSandbox: typeof NativeLocalSandbox
}
