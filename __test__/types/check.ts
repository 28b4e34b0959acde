// Compile-time checks of index.d.ts: the documented shapes must type-check, and misuse must not.
import {
  ProcessManager,
  ProcessHandle,
  Process,
  InvalidProcessCwdError,
  InvalidProcessOptionError,
  ProcessSpawnFailedError,
  ProcessNoTerminalError,
  ProcessExitedBeforeReadyError,
  ProcessExitedBeforeLogError,
  Terminal,
  createWebView,
  type TerminalSnapshot,
  type CommandResult,
  type ProcessStatus,
  type ProcessLogEvent,
} from '../../index.js'

export async function mastraSurface(pm: ProcessManager): Promise<number> {
  const h: ProcessHandle = await pm.spawn('echo hi', { timeout: 1000, onStdout: (d: string) => void d, stdinMode: 'ignore', maxRetainedBytes: Infinity })
  const pid: string = h.pid
  const code: number | undefined = h.exitCode
  const r: CommandResult = await h.wait({ onStderr: (d) => void d })
  const killed: boolean = await h.kill()
  await h.sendStdin('x')
  h.reader.pipe(h.writer)
  // @ts-expect-error stdinMode only takes 'pipe' | 'ignore'
  await pm.spawn('x', { stdinMode: 'inherit' })
  const list = await pm.list()
  const maybe: ProcessHandle | undefined = await pm.get(pid)
  void [code, killed, list, maybe]
  return r.exitCode
}

export async function processesApi(pm: ProcessManager): Promise<void> {
  const p: Process = await pm.exec(['node', '--version'], { cwd: '/tmp', env: { A: 'b' }, timeout: 10 })
  const text: string = (await p.output({ encoding: 'utf8' })).stdout
  const bytes: Uint8Array = (await p.output()).stdout
  const exitCode: number = await p.exitCode
  const st: ProcessStatus = await p.status()
  if (st.state === 'exited') {
    const c: number = st.exit.code
    void c
  }
  const stream: ReadableStream<ProcessLogEvent> = await p.logs({ since: 'c', replay: true, follow: true })
  const m = await p.waitForLog(/ready/, { stream: 'both' })
  const s: 'stdout' | 'stderr' = m.stream
  await p.waitForPort(3000, { mode: 'http', status: { min: 200, max: 299 } })
  await p.kill(9)
  // @ts-expect-error argv, not a string
  await pm.exec('node --version')
  const e = new InvalidProcessCwdError('x')
  const code: 'INVALID_PROCESS_CWD' = e.code
  const r: RangeError = new InvalidProcessOptionError('x')
  void [text, bytes, exitCode, stream, s, code, r]
}

export function logFiles(): void {
  new ProcessManager({ logDirectory: '/var/log/agent', logMaxBytes: 4 * 1024 * 1024, logKeep: 5 })
  // @ts-expect-error logDirectory is a path
  new ProcessManager({ logDirectory: true })
}

export async function containment(): Promise<void> {
  const pm = new ProcessManager({ containment: 'auto' })
  const mode: 'cgroup' | 'process-group' = pm.containment
  // @ts-expect-error containment is one of three words
  new ProcessManager({ containment: 'cgroups' })
  const st: ProcessStatus = await (await pm.exec(['true'])).status()
  const cpu: number | undefined = st.cpuTimeMs
  const info = (await pm.list())[0]
  const peak: number | undefined = info?.memoryPeakBytes
  // @ts-expect-error the 'error' state does not exist
  if (st.state === 'error') void st
  void [mode, cpu, peak]
}

export function spawnFailure(e: unknown): string | undefined {
  return e instanceof ProcessSpawnFailedError ? `${e.osCode} ${e.errno}` : undefined
}

export async function terminals(pm: ProcessManager): Promise<void> {
  const h: ProcessHandle = await pm.spawn('sh -i', { pty: true })
  await h.resize(100, 30)
  const p: Process = await pm.exec(['top'], { pty: { cols: 120, rows: 40, term: 'xterm' } })
  await p.resize(80, 24)
  // @ts-expect-error pty is true or an object
  await pm.exec(['sh'], { pty: 'yes' })
  const code: 'PROCESS_NO_TERMINAL' = new ProcessNoTerminalError('x').code
  const t: Terminal = await pm.createTerminal({ command: ['bash'], cols: 100, rows: 30, env: { A: 'b' } })
  await t.write('ls\r')
  await t.write(new Uint8Array([3]))
  const snap: TerminalSnapshot = await t.getSnapshot()
  const row: number = snap.cursor.row
  const lines: string[] = snap.lines
  const interrupted: boolean = await t.interrupt()
  const again: Terminal | null = await pm.getTerminal(t.id)
  const all: ProcessStatus[] = await pm.listTerminals()
  for await (const e of await t.output({ since: 'c', follow: true })) void e.cursor
  // Any WebSocket-like object: the `ws` package's, or one of the app's own.
  const socket = { send(_d: Uint8Array | string) {}, close() {}, on() { return socket }, bufferedAmount: 0 }
  const served: Promise<void> = t.connect(socket, { since: 'c', cursors: true })
  void served
  const view = await createWebView({ port: 0, managers: [pm] })
  const url: string = view.url
  await view.close()
  void url
  // @ts-expect-error command is an argv
  await pm.createTerminal({ command: 'bash' })
  void [code, row, lines, interrupted, again, all]
}

export async function signalsByName(pm: ProcessManager, p: Process, h: ProcessHandle, t: Terminal): Promise<void> {
  await p.kill('SIGTERM')
  await p.kill('TERM')
  await p.kill(9)
  const sent: boolean = await h.kill('SIGKILL')
  await pm.kill(h.pid, 'HUP')
  await t.kill('SIGINT')
  // @ts-expect-error names are upper case
  await p.kill('sigterm')
  // @ts-expect-error not a signal name
  await h.kill('SIGFOO')
  void sent
}

export function exitedBeforeDetail(e: unknown): string | undefined {
  if (e instanceof ProcessExitedBeforeReadyError || e instanceof ProcessExitedBeforeLogError) {
    const pid: number = e.pid
    const code: number = e.exitCode
    const signal: number | undefined = e.signal
    return `${pid} ${code} ${signal} ${e.stderrTail}`
  }
  return undefined
}

export async function services(pm: ProcessManager): Promise<void> {
  const restart = { policy: 'on-failure', maxRestarts: 3, backoffMs: { initial: 100, max: 5000, factor: 2 }, resetAfterMs: 60_000 } as const
  const p: Process = await pm.exec(['node', 'server.js'], { restart })
  const st: ProcessStatus = await p.status()
  if (st.state === 'backoff') void st.pid
  const count: number | undefined = st.restarts
  const last: number | undefined = st.lastExit?.code
  for await (const e of await p.logs()) if (e.type === 'restart') void [e.attempt, e.exit.code, e.cursor]
  const exit = await p.waitForExit()
  const gaveUp: boolean | undefined = exit.gaveUp
  const h: ProcessHandle = await pm.spawn('npm run dev', { restart: { policy: 'always' } })
  const r: CommandResult = await h.wait()
  const restarts: number | undefined = r.restarts
  // @ts-expect-error the policy is 'on-failure' or 'always'
  await pm.exec(['x'], { restart: { policy: 'sometimes' } })
  // @ts-expect-error a policy is required
  await pm.spawn('x', { restart: { maxRestarts: 2 } })
  void [count, last, gaveUp, restarts]
}

export async function probesAndShutdown(pm: ProcessManager): Promise<void> {
  const p: Process = await pm.exec(['node', 'server.js'], {
    readiness: { http: { port: 3000, path: '/health', status: 200 }, periodMs: 500, failureThreshold: 2 },
    liveness: { exec: ['curl', '-f', 'http://localhost:3000/health'], timeoutMs: 2000, initialDelayMs: 1000 },
    shutdown: { signal: 'SIGINT', timeoutMs: 10_000 },
  })
  const st: ProcessStatus = await p.status()
  const ready: boolean | undefined = st.ready
  const healthy: boolean | undefined = st.healthy
  for await (const e of await p.logs()) if (e.type === 'probe') void [e.probe === 'liveness', e.ok, e.reason, e.cursor]
  const exit = await p.stop()
  const h: ProcessHandle = await pm.spawn('npm run dev', { readiness: { log: '/ready in \\d+ms/i' }, liveness: { port: 3000 }, shutdown: {} })
  const stopped: number = (await h.stop()).code
  // @ts-expect-error a probe has one target
  await pm.exec(['x'], { readiness: { periodMs: 100 } })
  // @ts-expect-error a log pattern is a string ('/source/flags' for a regular expression)
  await pm.exec(['x'], { readiness: { log: /ready/ } })
  // @ts-expect-error shutdown takes a signal and a timeout
  await pm.exec(['x'], { shutdown: { grace: 1 } })
  void [ready, healthy, exit.code, stopped]
}
