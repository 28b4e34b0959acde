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

// The typings live under types/, a file per concern; consumers import every name from here.
export * from './types/options'
export * from './types/mastra-surface'
export * from './types/processes-api'
export * from './types/manager'
export * from './types/terminal'
export * from './types/web'
export * from './types/stack'
export * from './types/errors'
