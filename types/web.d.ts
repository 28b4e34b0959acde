/**
 * The local web view ({@link createWebView}) and the WebSocket a terminal can be served on
 * ({@link TerminalSocket}, {@link Terminal.connect}).
 * Re-exported by `procvisor` (index.d.ts).
 * @module
 */
import type { InvalidProcessOptionError } from './errors'
import type { ProcessManager } from './manager'
import type { Terminal } from './terminal'

/**
 * A WebSocket as {@link Terminal.connect} uses it: the `ws` package's, or any object with these
 * members. Output goes as binary frames (`send(Uint8Array)`); a text frame received is typed
 * as UTF-8, a binary one as bytes, except the resize message: a text frame of `"\u0000"`
 * followed by JSON `{ "cols": n, "rows": n }`.
 */
export interface TerminalSocket {
  send(data: Uint8Array | string): void
  close(code?: number, reason?: string): void
  on(event: 'message', listener: (data: unknown, isBinary?: boolean) => void): unknown
  on(event: 'close', listener: (...args: unknown[]) => void): unknown
  off?(event: string, listener: (...args: any[]) => void): unknown
  /** Bytes sent but not yet written: the output waits while it is over 256 KiB. */
  readonly bufferedAmount: number
  /** 1 while open (WebSocket.OPEN). */
  readonly readyState?: number
}

/** Options of {@link Terminal.connect}. */
export interface TerminalConnectOptions {
  /**
   * A cursor of the terminal's output: the output goes on right after it, with no repeat. Without
   * it, the retained output is sent from its first byte, which draws the screen again.
   */
  since?: string
  /**
   * Also send a text frame `"\u0000" + JSON` after each output frame: `{ cursor }` (the cursor to
   * resume after), `{ exit, cursor }` at the end, `{ error }` for a resize refused. Off by default:
   * xterm.js's attach addon would print them.
   */
  cursors?: boolean
}

/** A sandbox whose processes the web view shows: a `NativeLocalSandbox` of `procvisor/mastra`. */
export interface WebViewSandbox {
  readonly id: string
  readonly workingDirectory?: string
  readonly processes: { list(): Promise<unknown[]>; get(pid: string): Promise<unknown> }
}

/** Options of {@link createWebView}. */
export interface WebViewOptions {
  /** The port to listen on; default 0, a free one (the `url` says which). */
  port?: number
  /**
   * The address to listen on; default `'127.0.0.1'`. The Host header of every request must still
   * name the server by a loopback address (or by this one when it is a name or address of its own).
   */
  host?: string
  /** Managers whose processes and terminals the page shows. */
  managers?: ProcessManager[]
  /**
   * Sandboxes (`NativeLocalSandbox`) whose processes the page shows, each with its named
   * checkpoints (`sandbox.checkpoints`), which the page captures, restores and deletes.
   */
  sandboxes?: WebViewSandbox[]
}

/** A running web view, from {@link createWebView}. */
export interface WebView {
  /**
   * The address to open, with the token (`?token=…`): the first request with it sets an HttpOnly
   * SameSite=Strict cookie, and every request and WebSocket without the token or the cookie is
   * answered 403.
   */
  readonly url: string
  /** Stops the server and closes its WebSockets; the processes run on. */
  close(): Promise<void>
}

/**
 * Serves a page, on 127.0.0.1 by default, that lists `managers` and `sandboxes` and their
 * processes, terminals and (for a sandbox) checkpoints, shows each process's log live, and opens terminals with xterm.js
 * (served from the package; no remote assets). Requests whose Host header is not this server's
 * loopback address, and WebSockets whose Origin is not its own, are refused (DNS rebinding).
 * Bad options: {@link InvalidProcessOptionError}.
 */
export declare function createWebView(options?: WebViewOptions): Promise<WebView>
