'use strict'
// What the web view shows: a catalog of groups (a ProcessManager, a Mastra sandbox, a persistent
// sandbox of this user), each with its processes. `list()` is read afresh for every index page;
// `open(key, ref)` gives the object a page's WebSocket reads and types into, and how to let go
// of it, or null when there is no such group or process.
//
// A process entry: `{ ref, name, command, pid, state, exitCode, terminal, pty }` and what its
// status says of runs, probes and measures (restarts, gaveUp, ready, healthy, startedAt, cpuTimeMs,
// memoryBytes); `ref` names it
// in URLs (as does its `name`, when it was given one), `terminal` says it is a terminal of the
// group (createTerminal, sandbox.terminals), `pty` that a process runs on a pseudo-terminal: only
// those two are offered as a terminal to type in.

const { binding } = require('../native/native')
const { act, listed, withCheckpoints } = require('./checkpoints')

/** A shell command as given, or the argv joined. */
function commandText(argv, command) {
  if (typeof command === 'string') return command
  if (!Array.isArray(argv)) return ''
  if (argv.length === 3 && argv[0] === '/bin/sh' && argv[1] === '-c') return argv[2]
  return argv.join(' ')
}

/** What the index shows of a status besides its state: a service's runs, probes' verdicts, the measures. */
function measures(status) {
  const out = {}
  if (!status) return out
  for (const k of ['restarts', 'gaveUp', 'ready', 'healthy', 'startedAt', 'cpuTimeMs', 'memoryBytes']) if (status[k] !== undefined) out[k] = status[k]
  return out
}

/** Keys for URLs: a sandbox by its id where that is unique, else by its place in the list. */
function keysOf(items, prefix, idOf) {
  const ids = items.map(idOf)
  return items.map((item, i) => {
    const id = ids[i]
    return typeof id === 'string' && id !== '' && ids.indexOf(id) === i && !/^(manager|sandbox)-\d+$/.test(id) ? id : `${prefix}-${i + 1}`
  })
}

/** A ProcessManager of this Node process (the Processes API face). */
function managerGroup(manager, key, index) {
  return {
    key,
    kind: 'manager',
    title: `ProcessManager ${index + 1}`,
    detail: manager.workingDirectory,
    async processes() {
      const terminals = new Set((await manager.listTerminals()).map((t) => t.id))
      return (await manager.listProcesses()).map((s) => {
        const record = manager._records.get(s.id)
        const terminal = terminals.has(s.id)
        return {
          ref: s.id,
          name: s.name,
          command: terminal ? s.id : commandText(s.command, record && record.core.command),
          pid: s.pid,
          state: s.state,
          exitCode: s.exit ? s.exit.code : undefined,
          terminal,
          pty: s.pty === true,
          ...measures(s),
        }
      })
    },
    async act(ref, action, signal) {
      const target = (await manager.getTerminal(ref)) ?? (await manager.getProcess(ref))
      if (!target) return false
      if (action === 'kill') await target.kill(signal)
      else await target.restart()
      return true
    },
    async open(ref) {
      const terminal = await manager.getTerminal(ref)
      if (terminal) return { target: terminal, close() {} }
      const record = manager._records.get(ref)
      // The Mastra handle can also be typed into; a Process of exec() only read.
      const target = (record && record.listed && record.handle) || (await manager.getProcess(ref))
      return target ? { target, close() {} } : null
    },
  }
}

/**
 * A Mastra sandbox of this Node process (NativeLocalSandbox): its `processes` and its
 * `terminals`. A process is looked at without being read in Mastra's sense (`_peek`): opening
 * the index must not make an exited process's page, or the program's own `get()`, miss it.
 */
function sandboxGroup(sandbox, key) {
  const pm = sandbox.processes
  const peek = (ref) => (typeof pm._peek === 'function' ? pm._peek(ref) : pm.get(ref)).catch(() => undefined)
  const terminals = sandbox.terminals
  const terminalOf = async (ref) => (terminals && sandbox.status === 'running' ? await terminals.get(ref).catch(() => null) : null)
  return {
    key,
    kind: 'sandbox',
    title: `sandbox ${sandbox.id}`,
    detail: sandbox.workingDirectory ?? '',
    async processes() {
      const out = []
      for (const p of await pm.list()) {
        const handle = await peek(String(p.pid))
        const status = await handle?.nativeHandle?.status().catch(() => undefined)
        out.push({
          ref: String(p.pid),
          name: p.name,
          command: p.command ?? '',
          pid: p.pid,
          state: p.running ? 'running' : 'exited',
          exitCode: p.exitCode,
          terminal: false,
          pty: status?.pty === true,
          ...measures(status),
        })
      }
      if (terminals && sandbox.status === 'running') {
        for (const t of await terminals.list()) {
          const status = await t.status().catch(() => undefined)
          out.push({
            ref: t.id,
            command: t.id,
            pid: t.pid,
            state: status?.state ?? 'running',
            exitCode: status?.exit ? status.exit.code : undefined,
            terminal: true,
            pty: true,
            ...measures(status),
          })
        }
      }
      return out
    },
    canStop: typeof sandbox.stop === 'function',
    canDestroy: typeof sandbox.destroy === 'function',
    /** Its named checkpoints (sandbox.checkpoints), whether it runs or not. */
    async checkpoints() {
      const dir = sandbox.checkpoints?._checkpointing?.directory
      return dir ? listed(dir, () => binding.listCheckpoints(dir)) : undefined
    },
    /** A checkpoint button: through sandbox.checkpoints, so it takes its turn with the app's own captures. */
    checkpointAct: (action, name) => act(sandbox.checkpoints, action, name),
    async act(ref, action, signal) {
      const target = (await terminalOf(ref)) ?? (await peek(ref))?.nativeHandle
      if (!target) return false
      if (action === 'kill') await target.kill(signal)
      else await target.restart()
      return true
    },
    async groupAct(action) {
      await (action === 'stop' ? sandbox.stop() : sandbox.destroy())
      return true
    },
    async open(ref) {
      const terminal = await terminalOf(ref)
      if (terminal) return { target: terminal, close() {} }
      const target = (await peek(ref))?.nativeHandle
      return target ? { target, close() {} } : null
    },
  }
}

/** The catalog of what an app handed to createWebView: its managers and its sandboxes. */
function appCatalog({ managers = [], sandboxes = [] }) {
  const mKeys = keysOf(managers, 'manager', () => undefined)
  const sKeys = keysOf(sandboxes, 'sandbox', (s) => s && s.id)
  const groups = [...managers.map((m, i) => managerGroup(m, mKeys[i], i)), ...sandboxes.map((s, i) => sandboxGroup(s, sKeys[i]))]
  const byKey = new Map(groups.map((g) => [g.key, g]))
  return {
    async list() {
      const out = []
      for (const g of groups) {
        const entry = { key: g.key, kind: g.kind, title: g.title, detail: g.detail, canStop: g.canStop === true, canDestroy: g.canDestroy === true, processes: [] }
        try {
          entry.processes = await g.processes()
        } catch (e) {
          // A closed manager or a stopped sandbox: said on the page, the others still shown.
          entry.error = e && e.message ? e.message : String(e)
        }
        if (g.checkpoints) await withCheckpoints(entry, () => g.checkpoints())
        out.push(entry)
      }
      return out
    },
    async open(key, ref) {
      const g = byKey.get(key)
      return g ? g.open(ref) : null
    },
    /** The index's Kill and Restart: false when there is no such process. */
    async processAction(key, ref, action, signal) {
      const g = byKey.get(key)
      return g ? g.act(ref, action, signal) : false
    },
    /** The index's Stop and Destroy of a sandbox: false when there is none of that key. */
    async groupAction(key, action) {
      const g = byKey.get(key)
      return g && g.groupAct ? g.groupAct(action) : false
    },
    /** A checkpoint button of a sandbox: what it did, or false when there is no sandbox of that key. */
    async checkpointAction(key, action, name) {
      const g = byKey.get(key)
      return g && g.checkpointAct ? g.checkpointAct(action, name) : false
    },
  }
}


module.exports = { appCatalog, commandText }
