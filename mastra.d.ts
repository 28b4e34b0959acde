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
  LocalSandboxOptions,
  MastraSandbox,
  ProcessHandle,
  ProcessInfo,
  SandboxCloneOptions,
  SandboxProcessManager,
  SpawnProcessOptions,
} from '@mastra/core/workspace'
import type { ProcessHandle as ProcvisorProcessHandle } from './index'

/**
 * Mastra's `ProcessHandle` over one procvisor process.
 *
 * - `pid`: the OS pid (also the process group id) in decimal.
 * - `exitCode`: `undefined` while running; the process's own code after exit, `124` after a
 *   timeout (`timedOut: true`, stderr ends with `\nProcess timed out after <N>ms`), `128` when
 *   killed by a signal (`killed: true`), `1` when the process could not be supervised.
 * - `stdout` / `stderr`, truncation fields, listeners, `reader` / `writer`: Mastra's base class,
 *   fed incrementally (a UTF-8 character split across two reads arrives whole).
 * - `wait()`: resolves after the process exited and all its output was delivered; the same
 *   result every call.
 */
export declare class NativeProcessHandle extends ProcessHandle {
  /** @internal Created by {@link NativeProcessManager.spawn}. */
  constructor(options?: SpawnProcessOptions)
  /** The OS pid, in decimal (also the process group id). */
  readonly pid: string
  /** `undefined` while running (and until all output was delivered), then the exit code. */
  readonly exitCode: number | undefined
  /**
   * The procvisor handle underneath: `waitForPort`, `waitForLog`, `logs` (cursor-based,
   * re-readable), `status`, `kill(signal)`. Its own retained `stdout`/`stderr` are empty (Mastra's
   * base class retains the text).
   */
  readonly nativeHandle: ProcvisorProcessHandle
  /**
   * SIGKILL to the whole process group. `false` if the process had already exited; otherwise
   * `true`, without waiting for the exit. Safe to call twice. procvisor extension: a numeric
   * `signal` (1–64) sends that signal to the group instead.
   */
  kill(signal?: number): Promise<boolean>
  /**
   * Writes to stdin; resolves once written; writes stay in order. Rejects after exit
   * (`Process <pid> has already exited with code <n>`) and when spawned with `stdinMode: 'ignore'`.
   */
  sendStdin(data: string): Promise<void>
  /** Sends EOF on stdin. Idempotent; rejects after exit or when stdin was ignored. */
  closeStdin(): Promise<void>
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
  }): Promise<CommandResult>
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
  spawn(command: string, options?: SpawnProcessOptions): Promise<NativeProcessHandle>
  /** Every tracked process, running or exited, with its `command`. */
  list(): Promise<ProcessInfo[]>
}

/**
 * Mastra's `LocalSandbox` with {@link NativeProcessManager} as `processes`. Takes every
 * `LocalSandboxOptions`; everything else (lifecycle, mounts, isolation, checkpoints, instructions,
 * `setEnv`) is Mastra's `LocalSandbox`.
 */
export declare class NativeLocalSandbox extends MastraLocalSandbox {
  /** Mastra's `LocalSandbox` constructor, with the same options; starts nothing. */
  constructor(options?: LocalSandboxOptions)
  /**
   * The sandbox's process manager, bound to this sandbox: it follows the sandbox's working
   * directory, environment (including `setEnv`) and isolation.
   */
  readonly processes: NativeProcessManager<MastraLocalSandbox>
  /**
   * Mastra's built-in `executeCommand` over `this.processes`: args POSIX-quoted onto the command
   * line, stdin ignored, all output retained unless `maxRetainedBytes` is given, the handle
   * released afterwards (`processes.list()` stays empty), `command` set to the full command line.
   */
  executeCommand(command: string, args?: string[], options?: ExecuteCommandOptions): Promise<CommandResult>
  /** `LocalSandbox.clone()` that returns a `NativeLocalSandbox` (same fields as Mastra's). */
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
