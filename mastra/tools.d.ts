/**
 * `createProcessTools`: Mastra tools that give an agent the sandbox's processes, terminals and
 * checkpoints.
 * Re-exported by `procvisor/mastra` (index.d.ts).
 * @module
 */
import type { Tool } from '@mastra/core/tools'
import type { Workspace } from '@mastra/core/workspace'
import type { NativeLocalSandbox } from './index'

/** Options of {@link createProcessTools}. */
export interface ProcessToolsOptions {
  /** Most bytes of log text `read_logs` returns per call when the model names none. Default 16384. */
  maxLogBytes?: number
  /** How long a wait (`wait_for_port`, `wait_for_log`, `terminal_write`) lasts when the model names none, in ms. Default 30000. */
  timeoutMs?: number
  /** The longest wait a model may ask for, in ms. Default 600000. */
  maxTimeoutMs?: number
  /** How long a terminal must print nothing to count as quiet (`terminal_open`, `terminal_write` without `waitForText`), in ms. Default 300. */
  quietMs?: number
}

/** A terminal's screen as the terminal tools return it. */
export interface TerminalScreenResult {
  terminalId: string
  /** The screen, one string per row, trailing blanks removed; blank rows below the cursor left out. */
  lines: string[]
  /** Where the cursor is (0-based). */
  cursor: { row: number; col: number }
  /** With `waitForText`: whether the output after the input showed it before the timeout. */
  matched?: boolean
  /** The program has exited (`exitCode`: its code, or 128 + signal). */
  exited?: boolean
  exitCode?: number
  /** Why the wait ended without the text. */
  message?: string
}

/** A wait that ended with the process: its code (128 + signal after one) and the end of its stderr. */
export interface EndedBeforeWait {
  exitCode?: number | null
  signal?: number
  stderrTail?: string
  message?: string
}

/** Each tool's input and result, by its name without the prefix. */
export interface ProcessToolShapes {
  wait_for_port: {
    input: { pid: string; port: number; mode?: 'tcp' | 'http'; path?: string; timeoutMs?: number }
    output: { ready: boolean; ms: number } & EndedBeforeWait
  }
  wait_for_log: {
    input: { pid: string; pattern: string; stream?: 'stdout' | 'stderr' | 'both'; timeoutMs?: number }
    output: { matched: boolean; line: string | null; cursor: string | null } & EndedBeforeWait
  }
  read_logs: {
    input: { pid: string; since?: string; maxBytes?: number }
    output: { text: string; cursor: string | null; truncated: boolean; note?: string; exited: boolean; exitCode?: number }
  }
  list_processes: {
    input: Record<string, never>
    output: {
      processes: { pid: string; command?: string; state: 'running' | 'exited'; exitCode?: number; startedAt?: string; cpuTimeMs?: number }[]
      terminals: { terminalId: string; command: string[]; state: 'running' | 'exited'; exitCode?: number | null }[]
    }
  }
  terminal_open: { input: { command?: string; cols?: number; rows?: number; cwd?: string }; output: TerminalScreenResult }
  terminal_write: { input: { terminalId: string; input: string; waitForText?: string; timeoutMs?: number }; output: TerminalScreenResult }
  terminal_read: { input: { terminalId: string }; output: TerminalScreenResult }
  terminal_close: { input: { terminalId: string }; output: { terminalId: string; closed: boolean; exitCode: number } }
  checkpoint_capture: { input: { name?: string }; output: CheckpointResult }
  checkpoint_list: { input: Record<string, never>; output: { checkpoints: CheckpointResult[] } }
  checkpoint_restore: {
    input: { name: string }
    output: { name: string; files: number; unchanged: number; restored: number; removed: number; bytesWritten: number }
  }
  checkpoint_delete: { input: { name: string }; output: { name: string; deleted: boolean } }
}

/** A checkpoint as the checkpoint tools return it (`createdAt` an ISO 8601 string). */
export interface CheckpointResult {
  name: string
  createdAt: string
  files: number
  bytes: number
  /** Bytes its capture wrote (what was not shared with the last checkpoint); absent when unknown. */
  newBytes?: number
}

/**
 * The tools, by id: `P` is Mastra's workspace tool prefix (`WORKSPACE_TOOLS_PREFIX`,
 * `'mastra_workspace'`), as on `mastra_workspace_execute_command`.
 */
export type ProcessTools<P extends string = 'mastra_workspace'> = {
  [K in keyof ProcessToolShapes as `${P}_${K}`]: Tool<ProcessToolShapes[K]['input'], ProcessToolShapes[K]['output'], unknown, unknown, any, `${P}_${K}`>
}

/**
 * Mastra tools (made with the application's own `createTool` from `@mastra/core/tools`, with zod
 * input and output schemas) for an Agent beside the workspace's own tools:
 *
 * ```ts
 * const agent = new Agent({ model, workspace, tools: createProcessTools(workspace) })
 * ```
 *
 * - `mastra_workspace_wait_for_port` `{ pid, port, mode?, path?, timeoutMs? }`: `{ ready, ms }`;
 *   when the process exits first, its `exitCode` and `stderrTail` (the last 2000 characters).
 * - `mastra_workspace_wait_for_log` `{ pid, pattern, stream?, timeoutMs? }`: `{ matched, line,
 *   cursor }`. `pattern` is text to find as written, or `/regex/flags`.
 * - `mastra_workspace_read_logs` `{ pid, since?, maxBytes? }`: `{ text, cursor, truncated, note?,
 *   exited, exitCode? }`, stdout and stderr in order, at most `maxBytes` (default 16 KiB); the next
 *   call with `since: cursor` goes on with no gap or repeat.
 * - `mastra_workspace_list_processes`: `{ processes, terminals }`.
 * - `mastra_workspace_terminal_open` `{ command?, cols?, rows?, cwd? }`, `…_terminal_write`
 *   `{ terminalId, input, waitForText?, timeoutMs? }`, `…_terminal_read` `{ terminalId }`:
 *   {@link TerminalScreenResult}; `…_terminal_close` `{ terminalId }`.
 *
 * - `mastra_workspace_checkpoint_capture` `{ name? }`: {@link CheckpointResult}, the working
 *   directory saved (files unchanged since the last checkpoint shared with it); `…_checkpoint_list`:
 *   `{ checkpoints }`, oldest first; `…_checkpoint_restore` `{ name }`: the working directory rolled
 *   back in place (`restored` files written back, `removed` entries taken away, the `unchanged`
 *   rest untouched; running processes are left alone); `…_checkpoint_delete` `{ name }`. These are
 *   `sandbox.checkpoints` (index.d.ts), so a person's `procvisor checkpoint` sees what the agent
 *   saved.
 *
 * `input` is text with named keys in braces: `{Enter}`, `{Tab}`, `{Escape}`, `{Backspace}`,
 * `{Delete}`, `{Up}`, `{Down}`, `{Left}`, `{Right}`, `{Home}`, `{End}`, `{PageUp}`,
 * `{PageDown}`, `{Space}`, `{Ctrl-C}` (any letter; `Ctrl+C` too), names in any case; a newline
 * is Enter; other braces are typed as they are. `terminal_write` returns once the output after
 * the input shows `waitForText` (escape sequences removed; the echo of the input counts, so wait
 * for the next prompt rather than for text the input holds), or without one once the terminal
 * has been quiet for `quietMs`; at the timeout it returns the screen with `matched: false`.
 *
 * Results are small plain JSON; a failure (an unknown pid or terminal, a closed sandbox) reaches
 * the model as one sentence saying what to do, never a stack. The processes are those of
 * `sandbox.processes` (what `execute_command` with `background: true` starts), looked up without
 * Mastra's forget-after-exit read, so `kill_process` and `get_process_output` still find them.
 *
 * @param workspace A Mastra `Workspace` whose sandbox is a {@link NativeLocalSandbox}, or the
 *   sandbox itself. A bad option is a `TypeError` / `RangeError` here.
 */
export declare function createProcessTools(workspace: Workspace | NativeLocalSandbox, options?: ProcessToolsOptions): ProcessTools
