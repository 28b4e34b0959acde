// ESM entry: the same objects as the CommonJS entry (one native instance, one registry).
import { createRequire } from 'node:module'

const require = createRequire(import.meta.url)
const m = require('./index.js')

export const {
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
  SandboxSnapshotError,
  ProcessNoTerminalError,
  SandboxSupervisorLostError,
  SandboxProtocolError,
  SandboxAccessError,
  InvalidProcessOptionError,
} = m
export default m
