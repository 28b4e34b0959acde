// Every name `procvisor` exports, imported by its package name as a consumer does: a name that
// moved out of reach of the entry's typings, or changed from a value to a type only, fails here.
import {
  ProcessManager,
  ProcessHandle,
  Process,
  Terminal,
  liveProcessCount,
  createWebView,
  ProcessError,
  StaleProcessHandleError,
  ProcessNotFoundError,
  ProcessWaitTimeoutError,
  ProcessAbortedError,
  ProcessReadyTimeoutError,
  ProcessExitedBeforeReadyError,
  ProcessExitedBeforeLogError,
  InvalidProcessCwdError,
  InvalidProcessEnvironmentError,
  InvalidProcessCursorError,
  ProcessSpawnFailedError,
  InvalidProcessCommandError,
  InvalidProcessSignalError,
  ProcessManagerClosedError,
  ProcessAlreadyExitedError,
  ProcessStdinUnavailableError,
  ProcessStdinClosedError,
  ProcessStdinWriteError,
  ProcessStdinBacklogError,
  ProcessOutputTruncatedError,
  ProcessNoTerminalError,
  SandboxSnapshotError,
  SandboxSupervisorLostError,
  SandboxProtocolError,
  SandboxAccessError,
  InvalidProcessOptionError,
  type TerminalOptions,
  type ProcessLimits,
  type ProcessSignal,
  type ProcessManagerOptions,
  type SpawnProcessOptions,
  type ProcessInfo,
  type CommandResult,
  type WaitOptions,
  type ProcessCommand,
  type ExecOptions,
  type ProcessExit,
  type ProcessStatus,
  type ProcessOutput,
  type ProcessOutputOptions,
  type ProcessLogsOptions,
  type ProcessLogEvent,
  type WaitForExitOptions,
  type WaitForLogOptions,
  type WaitForLogResult,
  type WaitForPortOptions,
  type CreateTerminalOptions,
  type TerminalSnapshot,
  type TerminalSocket,
  type TerminalConnectOptions,
  type WebViewOptions,
  type WebViewSandbox,
  type WebView,
  // Declared without `export`, yet importable: a declaration file exports every top-level name.
  type ProcessStatusBase,
  type WithoutSig,
} from 'procvisor'
import * as procvisor from 'procvisor'

type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false
const expectTrue = <T extends true>(t: T): T => t

// The values, exactly: the classes and the function, nothing missing and nothing more.
const values = {
  ProcessManager, ProcessHandle, Process, Terminal, liveProcessCount, createWebView, ProcessError, StaleProcessHandleError,
  ProcessNotFoundError, ProcessWaitTimeoutError, ProcessAbortedError, ProcessReadyTimeoutError,
  ProcessExitedBeforeReadyError, ProcessExitedBeforeLogError, InvalidProcessCwdError,
  InvalidProcessEnvironmentError, InvalidProcessCursorError, ProcessSpawnFailedError, InvalidProcessCommandError,
  InvalidProcessSignalError, ProcessManagerClosedError, ProcessAlreadyExitedError, ProcessStdinUnavailableError,
  ProcessStdinClosedError, ProcessStdinWriteError, ProcessStdinBacklogError, ProcessOutputTruncatedError, ProcessNoTerminalError,
  SandboxSnapshotError, SandboxSupervisorLostError, SandboxProtocolError, SandboxAccessError, InvalidProcessOptionError,
}
expectTrue<Equal<keyof typeof procvisor, keyof typeof values>>(true)

// Each error class keeps its base and its literal code.
expectTrue<Equal<typeof StaleProcessHandleError.code, 'STALE_PROCESS_HANDLE'>>(true)
expectTrue<Equal<InvalidProcessOptionError['code'], 'INVALID_PROCESS_OPTION'>>(true)
const asRange: RangeError = new InvalidProcessOptionError()
const asBase: ProcessError = new SandboxAccessError()
void asRange
void asBase

// The types, each still the shape it was.
export type Types = [
  TerminalOptions,
  ProcessLimits,
  ProcessSignal,
  ProcessManagerOptions,
  SpawnProcessOptions,
  ProcessInfo,
  CommandResult,
  WaitOptions,
  ProcessCommand,
  ExecOptions,
  ProcessExit,
  ProcessStatus,
  ProcessOutput,
  ProcessOutputOptions,
  ProcessLogsOptions,
  ProcessLogEvent,
  WaitForExitOptions,
  WaitForLogOptions,
  WaitForLogResult,
  WaitForPortOptions,
  CreateTerminalOptions,
  TerminalSnapshot,
  TerminalSocket,
  TerminalConnectOptions,
  WebViewOptions,
  WebViewSandbox,
  WebView,
  ProcessStatusBase,
  WithoutSig<'SIGTERM'>,
]
expectTrue<Equal<WithoutSig<'SIGTERM'>, 'TERM'>>(true)
expectTrue<Equal<ProcessStatusBase['pid'], number>>(true)
const sig: ProcessSignal[] = [15, 'SIGTERM', 'TERM']
const limits: ProcessLimits = { cpuSeconds: 1, openFiles: 64 }
const exec: ExecOptions = { cwd: '/', limits, pty: { cols: 80, rows: 24, term: 'xterm' } }
const terminal: CreateTerminalOptions = { command: ['/bin/sh'], cols: 100 }
// @ts-expect-error a command is a non-empty argv
const noArgv: ProcessCommand = []
export const uses = { sig, exec, terminal, noArgv, live: liveProcessCount() as number }
