/**
 * `sandbox.terminals` of {@link NativeLocalSandbox}: programs on a terminal of their own.
 * Re-exported by `procvisor/mastra` (index.d.ts).
 * @module
 */
import type { Terminal } from '../index'
import type { NativeLocalSandbox } from './index'

/** Options of {@link SandboxTerminals.create}. */
export interface SandboxTerminalOptions {
  /**
   * What runs: a command line for `/bin/sh -c` (as `processes.spawn` takes it), or an argv run
   * as is. Default: the shell of `SHELL` in the sandbox's env, else the account's login shell,
   * else `/bin/sh`; on a terminal it is interactive. Under the sandbox's isolation
   * (`'bwrap'` / `'seatbelt'`) it runs wrapped, as the sandbox's processes do.
   */
  command?: string | readonly string[]
  /** Columns, 1–65535. Default 80. */
  cols?: number
  /** Rows, 1–65535 (at most 1,048,576 cells in all). Default 24. */
  rows?: number
  /** Working directory, absolute or relative to the sandbox's (the default). */
  cwd?: string
  /**
   * Environment over the sandbox's (`env` option and `setEnv`); `undefined` drops a name. Where
   * neither sets them, a terminal gets `TERM=xterm-256color`, `HOME`, `USER` and `SHELL` of the
   * account Node runs as, and `LANG=C.UTF-8` (`en_US.UTF-8` on macOS).
   */
  env?: Record<string, string | undefined>
}

/**
 * The terminals of one {@link NativeLocalSandbox}. Each is procvisor's {@link Terminal} (`write`,
 * `resize`, `output({ since })`, `getSnapshot()`, `waitForLog`, `waitForExit`, `interrupt`,
 * `kill`, `terminate`), started as the sandbox's processes are (working directory, env,
 * isolation, containment). `stop()`, `destroy()` and the end of the sandbox's lifetime kill them;
 * a `Terminal` object of a stopped sandbox then rejects with `StaleProcessHandleError`.
 *
 * In a persistent sandbox the supervisor keeps them: they outlive this Node process, and
 * `get(id)` in another one finds them with their screen and output, whose cursors resume across
 * Node processes. The `Terminal` there has the same members, each answered by the supervisor;
 * when this object lets go of the supervisor (`detach()`, `stop()`) its calls reject with
 * `SandboxSupervisorLostError`.
 */
export interface SandboxTerminals {
  /**
   * Starts a terminal; starts the sandbox first if needed, as `processes.spawn` does. A bad
   * option (an unknown name, an empty command, a size out of range) rejects with
   * `InvalidProcessOptionError` and starts nothing; a missing `cwd` with `InvalidProcessCwdError`.
   */
  create(options?: SandboxTerminalOptions): Promise<Terminal>
  /** The terminal with this id (`terminal.id`); `null` when the sandbox has none by that id (or `id` is not a string). */
  get(id: string): Promise<Terminal | null>
  /** The running terminals and the last 64 that exited, oldest first. */
  list(): Promise<Terminal[]>
}
