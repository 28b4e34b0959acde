/**
 * {@link ProcessManager}, which starts and tracks the processes of both faces, and
 * {@link liveProcessCount}.
 * Re-exported by `procvisor` (index.d.ts).
 * @module
 */
import type {
  InvalidProcessCommandError,
  InvalidProcessCwdError,
  InvalidProcessEnvironmentError,
  InvalidProcessOptionError,
  InvalidProcessSignalError,
  ProcessManagerClosedError,
  ProcessSpawnFailedError,
  StaleProcessHandleError,
} from './errors'
import type { ProcessHandle, ProcessInfo, SpawnProcessOptions } from './mastra-surface'
import type { ProcessManagerOptions, ProcessSignal, TerminalOptions } from './options'
import type { ExecOptions, Process, ProcessCommand, ProcessStatus } from './processes-api'
import type { CreateTerminalOptions, Terminal } from './terminal'
import type { StackConfig, StackDownResult, StackUpOptions, StackUpResult } from './stack'

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
  /**
   * The handle for `pid` (or the process's `name`: the one that took it last), or `undefined`.
   * The first `get` after exit returns it and forgets it.
   */
  get(pid: string): Promise<ProcessHandle | undefined>
  /**
   * SIGKILL (or `signal`, a {@link ProcessSignal}) to the group of `pid` (or name), waits for the exit,
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
   * The process with this id (from `exec`, or {@link ProcessHandle.id} of a spawn) or `name`, the same
   * object every call, or `null` when unknown, no longer kept, or the manager is closed; never
   * throws for a missing one.
   */
  getProcess(id: string): Promise<Process | null>
  /** The status of the running processes and the last 64 exited ones, oldest start first; `[]` once closed. */
  listProcesses(): Promise<ProcessStatus[]>
  /**
   * Starts each process of the stack that is not running by its name, in dependency order, each once
   * its `dependsOn` conditions are met. A bad config (a cycle, an unknown dependency or key) rejects
   * with {@link InvalidProcessOptionError} before anything runs; a dependency that can never meet its
   * condition rejects with `ProcessExitedBeforeReadyError` naming both, and nothing after it starts.
   */
  up(config: StackConfig, options?: StackUpOptions): Promise<StackUpResult>
  /**
   * Stops the running processes of the stack (default: the last one brought up) in the reverse of
   * the start order, each through its `shutdown`; resolves once each has exited.
   */
  down(config?: StackConfig, options?: StackUpOptions): Promise<StackDownResult>
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
   * Kills every process of this manager and waits for them, and for their logs in
   * `logDirectory` to be complete (no file is written or made once it resolves); afterwards
   * every handle is stale ({@link StaleProcessHandleError}) and new work is refused
   * ({@link ProcessManagerClosedError}). Idempotent.
   */
  close(): Promise<void>
}

/** How many supervised processes are alive in this Node process (all managers, all threads). */
export declare function liveProcessCount(): number
