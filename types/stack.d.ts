/**
 * A stack of services: the config of `procvisor.config.yaml` / `.json`, which
 * `ProcessManager.up()`, a Mastra sandbox's `processes.up()` and `procvisor up` take.
 * Re-exported by `procvisor` (index.d.ts).
 * @module
 */
import type { ProbeOptions, RestartOptions, ShutdownOptions, TerminalOptions } from './options'

/** What a process waits for of a dependency before it starts. */
export type StackCondition = 'started' | 'ready' | 'healthy' | 'completed' | 'completed-successfully'

/** One process of a stack, by its name (the `name` rule of `exec`/`spawn`). */
export interface StackProcess {
  /** A string runs in the shell (`/bin/sh -c`); an array is an argv. */
  command: string | readonly string[]
  /** Relative to the stack's `workingDirectory`. */
  cwd?: string
  env?: Record<string, string>
  restart?: RestartOptions
  readiness?: ProbeOptions
  liveness?: ProbeOptions
  /** `{ db: 'ready' }`: start once `db` is ready. `ready` needs the dependency's readiness probe, `healthy` its liveness probe. */
  dependsOn?: Record<string, StackCondition>
  shutdown?: ShutdownOptions
  pty?: boolean | TerminalOptions
}

/** A stack. Checked whole before anything runs: a mistake is `InvalidProcessOptionError` with the path of the bad key. */
export interface StackConfig {
  /** The persistent sandbox `procvisor up` runs it in (default: the config file's directory name). */
  id?: string
  /** Where its processes run (a process's `cwd` is relative to it). */
  workingDirectory?: string
  /** The lifetime of `procvisor up`'s sandbox; 0: none. */
  timeoutMs?: number
  processes: Record<string, StackProcess>
}

export interface StackUpOptions {
  /** Hears each step: `('db', 'started (pid 42)')`, `('db', 'ready')`, `('api', 'already running')`. */
  onProgress?: (name: string, what: string) => void
  /** Ends a wait for a dependency with `ProcessAbortedError`; what started runs on. */
  signal?: AbortSignal
}

/** What `up()` did, names in start order. */
export interface StackUpResult {
  started: string[]
  /** Already running by their names: joined, not started again. */
  running: string[]
}

/** What `down()` stopped, in the order it stopped them (the reverse of the start order). */
export interface StackDownResult {
  stopped: string[]
}
