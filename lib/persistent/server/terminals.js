'use strict'
// A persistent sandbox's terminals, kept by its supervisor: the calls that start, find and drive
// them (added to the supervisor's ops, checked by calls.js like every other call), on one
// ProcessManager of the supervisor's, so that a terminal, its screen and its output outlive the
// Node process that opened it and are there for the next one.

const errors = require('../../native/errors')
const { Terminal } = require('../../faces/terminal')
const { decodeValue } = require('../wire/values')
const { followed } = require('./connection')
const { LogStream } = require('./log-stream')
const { logStart } = require('../../process/observe')

/** The Terminal methods a client may call, and nothing of the object beyond them. */
const METHODS = new Set(['write', 'resize', 'interrupt', 'kill', 'terminate', 'getSnapshot', 'status', 'waitForExit', 'waitForLog', 'waitForPort', 'stop', 'restart'])

/**
 * The terminal calls of a supervisor whose processes run on `manager()`; `ending()` says whether
 * the sandbox is stopping (no terminal starts then), `logFiles()` whether its processes write
 * logs (wire/log-files.js). The manager's end is theirs.
 */
function supervisorTerminals({ manager, logFiles, ending }) {
  /** Terminal id → { core, streams }: what LogStream (log-stream.js) reads a terminal's output from. */
  const logged = new Map()

  async function terminalOf(id) {
    const t = await manager().getTerminal(id)
    if (!t) throw new errors.ProcessNotFoundError(`No terminal ${id} in this sandbox`)
    return t
  }

  const describeTerminal = (t) => ({ id: t.id, pid: t.pid })

  /** The record LogStream reads, whose wake-up (installed once) moves its streams on. */
  function logRecord(t) {
    let rec = logged.get(t.id)
    if (!rec) {
      rec = { core: t._port, streams: new Set(), logFiles: logFiles() }
      logged.set(t.id, rec)
      t._port.native.setReaderWake(() => {
        for (const st of [...rec.streams]) st.next()
      })
    }
    return rec
  }

  const ops = {
    async terminalCreate(client, a) {
      if (ending()) throw new errors.ProcessManagerClosedError('The sandbox is stopping')
      if (a.argv.length === 0) throw errors.invalidOption('a terminal needs a command')
      const t = await manager().createTerminal({ command: a.argv, cwd: a.cwd, env: a.env, cols: a.cols, rows: a.rows })
      return describeTerminal(t)
    },

    async terminalGet(client, a) {
      const t = await manager().getTerminal(a.id)
      return t ? describeTerminal(t) : null
    },

    async terminalList() {
      const out = []
      for (const s of await manager().listTerminals()) out.push({ id: s.id, pid: s.pid })
      return out
    },

    async terminalCall(client, a) {
      if (!METHODS.has(a.method)) throw new errors.SandboxProtocolError(`${JSON.stringify(a.method).slice(0, 80)} is not a method of a terminal`)
      const t = await terminalOf(a.id)
      const args = decodeValue(a.args || [])
      if (a.method === 'write' && !(typeof args[0] === 'string' || Buffer.isBuffer(args[0]))) {
        throw new errors.SandboxProtocolError('terminalCall: write takes text or bytes')
      }
      const value = await Terminal.prototype[a.method].apply(t, args)
      // Nothing of the process object itself crosses: its own methods answer plain values.
      return a.method === 'kill' ? undefined : value
    },

    /** A `output(options)` stream of a terminal for this client, as `logsOpen` for a process. */
    async terminalLogsOpen(client, a) {
      const t = await terminalOf(a.id)
      const rec = logRecord(t)
      const start = logStart(rec.core.native, decodeValue(a.options))
      const id = client.nextStream++
      const st = new LogStream(client, id, rec, start)
      client.streams.set(id, st)
      return followed(id, () => st.next())
    },
  }

  return { ops }
}

module.exports = { supervisorTerminals }
