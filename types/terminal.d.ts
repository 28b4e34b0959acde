/**
 * Terminals: a program on a pseudo-terminal of its own, with a screen
 * ({@link ProcessManager.createTerminal}, {@link Terminal}).
 * Re-exported by `procvisor` (index.d.ts).
 * @module
 */
import type { InvalidProcessCursorError, InvalidProcessOptionError, ProcessAlreadyExitedError } from './errors'
import type { ProcessManager } from './manager'
import type { ProcessLimits, ProcessSignal, TerminalOptions } from './options'
import type {
  Process,
  ProcessCommand,
  ProcessExit,
  ProcessLogEvent,
  ProcessLogsOptions,
  ProcessStatus,
  WaitForExitOptions,
  WaitForLogOptions,
  WaitForLogResult,
} from './processes-api'
import type { TerminalConnectOptions, TerminalSocket } from './web'

/** Options of {@link ProcessManager.createTerminal}: what runs, where, and the window. */
export interface CreateTerminalOptions extends TerminalOptions {
  /** The program and its arguments (no shell). Default `['/bin/sh']`, interactive on the terminal. */
  command?: ProcessCommand
  /** Working directory, absolute or relative to the manager's (the default). */
  cwd?: string
  /** Environment over the manager's; `undefined` drops a name. `TERM` defaults to `term`. */
  env?: Record<string, string | undefined>
  /** Lifetime in milliseconds, as for `exec`. */
  timeout?: number
  /** Milliseconds between the timeout's SIGTERM and SIGKILL. Default 1000. */
  gracePeriod?: number
  /** Resource limits (see {@link ProcessLimits}). */
  limits?: ProcessLimits
}

/** What a terminal shows, rendered from its output by a terminal emulator. Rows and columns are 0-based. */
export interface TerminalSnapshot {
  /** Columns of the window. */
  cols: number
  /** Rows of the window. */
  rows: number
  /** One string per row of the window, trailing blanks removed. */
  lines: string[]
  /** Where the cursor is. */
  cursor: { row: number; col: number }
  /**
   * The window title the program set (`ESC ] 2 ; … BEL`), `''` if none; at most 4 KiB (cut at a
   * character). The screen drops an OSC string longer than 8 KiB whole (a title past that is
   * never set); the output is not filtered.
   */
  title: string
}

/**
 * A program on a pseudo-terminal of its own, from {@link ProcessManager.createTerminal}. It is a
 * process like any other (`getProcess(id)`, kill, `close()`, containment and the watchdog
 * apply); its output is the terminal's, everything it printed.
 */
export declare class Terminal {
  private constructor()
  /** The id (also its process id, and the id in its cursors). */
  readonly id: string
  /** The OS pid of the program: the leader of the terminal's session and of its process group. */
  readonly pid: number
  /** ProcessStatus of the program. */
  status(): Promise<ProcessStatus>
  /**
   * Types raw bytes (a string as UTF-8): `'\r'` is Enter, `'\x03'` Ctrl-C, `'\x04'` EOF at the
   * start of a line. Resolves once written; writes keep their order. After the exit
   * {@link ProcessAlreadyExitedError}.
   */
  write(data: string | Uint8Array): Promise<void>
  /**
   * Sets the window size (integers 1–65535 with `cols × rows` at most 1,048,576 cells, else
   * {@link InvalidProcessOptionError}, and nothing changes); the foreground job gets SIGWINCH and
   * the snapshot follows. After the exit {@link ProcessAlreadyExitedError}.
   */
  resize(cols: number, rows: number): Promise<void>
  /**
   * The output as a stream of `stdout` events (then one `terminal` event at the exit), each with
   * a cursor: `since` resumes right after one, with no gap or repeat. As {@link Process.logs}.
   */
  output(options?: ProcessLogsOptions): Promise<ReadableStream<ProcessLogEvent>>
  /** Waits until the program and everything it started have exited. As {@link Process.waitForExit}. */
  waitForExit(options?: WaitForExitOptions): Promise<ProcessExit>
  /** Waits until the output matches `pattern`. As {@link Process.waitForLog}. */
  waitForLog(pattern: string | RegExp, options?: WaitForLogOptions): Promise<WaitForLogResult>
  /**
   * SIGINT to the terminal's foreground process group (the job in front, not the shell behind
   * it); `false` when it reached no process. After the exit {@link ProcessAlreadyExitedError}.
   */
  interrupt(): Promise<boolean>
  /**
   * Sends a signal ({@link ProcessSignal}, default SIGTERM) to the program's process group and to
   * every process of the terminal's session; resolves once sent, never escalates.
   */
  kill(signal?: ProcessSignal): Promise<void>
  /** SIGKILL to every process of the terminal's session; resolves with the exit once all are gone. */
  terminate(): Promise<ProcessExit>
  /**
   * Serves this terminal on a WebSocket (the `ws` package's, or any {@link TerminalSocket}) in
   * the protocol of xterm.js's attach addon: the output as binary frames, from the first retained
   * byte or right after `since`; text or binary frames received are typed; a text frame of
   * `"\u0000"` followed by JSON `{ "cols": n, "rows": n }` resizes. Resolves once the socket
   * closed or the program ended (the socket is then closed with 1000). A `since` the output does
   * not know closes the socket with 1008 and rejects with {@link InvalidProcessCursorError}.
   * The output waits while the socket holds over 256 KiB unsent.
   */
  connect(ws: TerminalSocket, options?: TerminalConnectOptions): Promise<void>
  /** What the terminal shows now (also after the exit: its last screen). */
  getSnapshot(): Promise<TerminalSnapshot>
}
