'use strict'
// A persistent sandbox's processes as its supervisor serves them. They run on one
// ProcessManager of the supervisor's, the same in-process backend a sandbox without a supervisor
// runs on: it keeps the table (pids, names, the exited ones and their cap), launches and ends
// them. Each call maps onto one of its methods, or of the process's own handle. What is kept
// here is what the wire needs beside it: which clients are sent a process's output and from
// where (feed.js), its `logs()` streams, and the end as Mastra's handles report it.

const errors = require('../../native/errors')
const rules = require('../../process/mastra-rules')
const { decodeValue } = require('../wire/values')
const { followed } = require('./connection')
const { LogStream } = require('./log-stream')
const { logStart } = require('../../process/observe')
const { handOver } = require('../../process/stdin-queue')

/** Mastra's default retention per stream when a spawn names none. */
const DEFAULT_RETAINED = 1024 * 1024

/** How long the end waits, past the manager's close, for an end to be settled for the clients. */
const SETTLE_MS = 2000

/** `promise`, or nothing once `ms` have passed without it settling. */
function within(promise, ms) {
  let timer
  const late = new Promise((resolve) => (timer = setTimeout(resolve, ms)))
  return Promise.race([promise, late]).finally(() => clearTimeout(timer))
}

/** The Processes API methods a client may call on a process's handle. */
const VIEW_METHODS = new Set(['status', 'output', 'waitForExit', 'waitForLog', 'waitForPort', 'stop', 'restart', 'kill', 'resize'])

/**
 * Mastra's `maxRetainedBytes` as it crossed the socket (`'Infinity'` keeps everything, as
 * in-process). A client of another build may send a value its own side would have refused: it is
 * refused here by the same rule.
 */
function retention(v) {
  if (v === undefined) return DEFAULT_RETAINED
  return rules.retainedBytes(v === 'Infinity' ? Infinity : v)
}

/**
 * The process calls of a supervisor whose processes run on `manager()`; `ending()` says whether
 * the sandbox is stopping (nothing starts then), `logFiles()` whether its processes write logs.
 * `end(lifetimeMs)` ends them all, for the sandbox's end (the lifetime's, when it names one).
 */
function servedProcesses({ manager, logFiles, ending }) {
  /** The wire's state of each process, by its manager's handle. */
  const served = new WeakMap()

  function info(rec) {
    const out = rules.processInfo({ pid: rec.pid, command: rec.command, exitCode: rec.result?.exitCode, name: rec.name })
    // Which processes a person may open as a terminal (the web view, attach): those on a pty.
    if (rec.core.native.onTerminal) out.pty = true
    return out
  }

  function settle(rec, exit) {
    const { note, ...result } = rules.ending(exit, { timeoutMs: rec.core.timeout, lifetimeMs: rec.core.lifetimeMs })
    // Mastra's note on a timeout is part of stderr, after all output and before the exit, for
    // every subscriber alike. It is not the process's output, so not in its log: it goes apart.
    if (note) rec.note = note
    // Finished: all the output a Mastra handle reports is in the log by now, up to here.
    rec.finalSeq = rec.core.native.lastSeq()
    rec.result = result
    for (const c of [...rec.subscribers]) c.feed.woken(rec)
    if (rec.released) manager().release(rec.pid)
  }

  /** The process of `pid`: the pid it was spawned with, its name, or a service's current run's. */
  function lookup(pid) {
    const handle = manager()._find(pid)
    return handle && served.get(handle)
  }

  function recordOf(pid) {
    const rec = lookup(pid)
    if (!rec) throw new errors.ProcessNotFoundError(`No process with pid ${pid} in this sandbox`)
    return rec
  }

  function stdinCheck(rec) {
    rules.checkStdin(rec.pid, rec.result?.exitCode, rec.stdinMode)
  }

  /** The answer to a spawn or an attach: the process, `text` it kept, its result once exited. */
  function answerOf(rec, text) {
    const max = rec.retention === Infinity ? 'Infinity' : rec.retention
    return { ...info(rec), id: rec.core.id, stdinMode: rec.stdinMode, maxRetainedBytes: max, ...text, result: rec.result }
  }

  const ops = {
    async spawn(client, a) {
      if (ending()) throw new errors.ProcessManagerClosedError('The sandbox is stopping')
      const retained = retention(a.maxRetainedBytes)
      const stdinMode = rules.stdinModeOf(a.stdinMode)
      // The call's env is the whole environment, resolved by the client; the manager adds none.
      const handle = await manager().spawn(a.command, {
        argv: a.argv,
        cwd: a.cwd,
        env: a.env,
        timeout: a.timeout,
        stdinMode,
        maxRetainedBytes: retained,
        pty: a.pty,
        restart: a.restart,
        readiness: a.readiness,
        liveness: a.liveness,
        shutdown: a.shutdown,
        name: a.name,
      })
      const core = handle._port
      // Its output is read from the log by each client's feed, from the first byte, which the
      // launch held for it (as for a reader).
      core.readerMade = true
      const rec = {
        pid: handle.pid,
        pidNumber: core.pid,
        name: a.name,
        command: a.command,
        stdinMode,
        retention: retained,
        core,
        view: handle,
        logFiles: logFiles(),
        // What `describe` says of how it was started: the names of its environment, never the values.
        started: { env: [...new Set(['PATH', ...Object.keys(a.env || {})])].sort(), restart: a.restart, readiness: a.readiness, liveness: a.liveness, shutdown: a.shutdown, timeout: a.timeout },
        subscribers: new Set(),
        /** Its `logs()` streams, of any client. */
        streams: new Set(),
        hold: 0,
        ringHold: null,
        unwoken: false,
        result: undefined,
        finalSeq: 0,
        note: undefined,
        released: false,
      }
      served.set(handle, rec)
      // The rest after the reply, which it does not need (the reply is on the path of every
      // spawn): the wake-up, the watch for the end, and the output from the first byte, which the
      // client must get after the reply anyway.
      return followed(answerOf(rec, { stdout: '', stderr: '' }), () => {
        core.native.setReaderWake(() => {
          for (const c of [...rec.subscribers]) c.feed.woken(rec)
          for (const st of [...rec.streams]) st.next()
        })
        core.finish().then((exit) => settle(rec, exit))
        client.feed.add(rec, 0)
      })
    },

    // A running service's pid is its current run's, as its status reports (lookups take either);
    // once it ended for good, the pid it was spawned with, which its handles have.
    list: () =>
      manager()
        ._handles()
        .map((h) => served.get(h))
        .filter(Boolean)
        .map((rec) => (rec.result === undefined ? { ...info(rec), pid: String(rec.core.currentPid) } : info(rec))),

    /** How a process was started and how it is now, for a person (`procvisor describe`). */
    async describe(client, a) {
      const rec = recordOf(a.pid)
      return { ...info(rec), ...rec.started, status: await rec.view.status() }
    },

    /** The pid a process was spawned with, which keys it, found by any of its ids; null for none. */
    lookup: (client, a) => lookup(a.pid)?.pid ?? null,

    /**
     * The process, its retained text and its result once exited; the client is sent the output
     * after that text, and the exit.
     */
    attach(client, a) {
      const rec = recordOf(a.pid)
      const native = rec.core.native
      // The text and the log position it reaches, read together: output appended between the
      // two reads would be sent twice or never. Appends are rare enough that this settles at once.
      let seq
      let out
      for (let i = 0; ; i++) {
        seq = native.lastSeq()
        out = native.retainedOutput()
        if (native.lastSeq() === seq || i === 16) break
      }
      const answer = answerOf(rec, { stdout: out.stdout, stderr: out.stderr })
      if (rec.result === undefined) return followed(answer, () => client.feed.add(rec, seq))
      if (rec.note) answer.stderr += rec.note
      return answer
    },

    unsubscribe(client, a) {
      const rec = lookup(a.pid)
      if (rec) client.feed.remove(rec)
    },

    /**
     * Forgets the process once it exited. A client still being sent its output keeps its record
     * until it was sent the exit: a process released elsewhere must not leave that client's
     * wait() unanswered; and a running one stays listed for the other clients until then.
     */
    release(client, a) {
      const rec = lookup(a.pid)
      if (!rec) return
      rec.released = true
      if (rec.result !== undefined) manager().release(rec.pid)
    },

    async kill(client, a) {
      const rec = recordOf(a.pid)
      if (rec.result !== undefined) return false
      return rec.view.kill(a.signal)
    },

    async stdin(client, a) {
      const rec = recordOf(a.pid)
      stdinCheck(rec)
      // The frame's bytes are the supervisor's own: written as they are, not copied first.
      const written = rec.view.sendStdin(handOver(a.data))
      a.data = undefined
      await written
    },

    async closeStdin(client, a) {
      const rec = recordOf(a.pid)
      stdinCheck(rec)
      await rec.view.closeStdin()
    },

    async view(client, a) {
      if (!VIEW_METHODS.has(a.method)) throw errors.invalidOption(`${a.method} is not a method of a process`)
      const rec = recordOf(a.pid)
      return rec.view[a.method](...decodeValue(a.args || []))
    },

    /**
     * Opens a stream of `logs(options)` for this client: its events are pushed to it (feed.js)
     * in BLOB frames that name the stream by the id this answers.
     */
    logsOpen(client, a) {
      const rec = recordOf(a.pid)
      const start = logStart(rec.core.native, decodeValue(a.options))
      const id = client.nextStream++
      const st = new LogStream(client, id, rec, start)
      client.streams.set(id, st)
      // Its events after the reply that names it.
      return followed(id, () => st.next())
    },

    logsClose(client, a) {
      client.streams.get(a.stream)?.close()
    },
  }

  /**
   * Ends every process (and terminal) of the manager, each through its shutdown, and waits until
   * each one's end was settled for its clients. `lifetimeMs`: the lifetime whose end kills them.
   */
  async function end(lifetimeMs) {
    const running = manager()
      ._handles()
      .map((h) => served.get(h))
      .filter((rec) => rec && rec.result === undefined)
    await (lifetimeMs === undefined ? manager().close() : manager()._closeAtLifetime(lifetimeMs))
    // The close waited its bound for each end. One that never comes (a child in uninterruptible
    // sleep, or traced by a stopped debugger, which the kernel will not let its parent reap) is
    // given a moment more, not forever: the sandbox ends without it.
    await Promise.all(running.map((rec) => within(rec.core.finish(), SETTLE_MS)))
  }

  return { ops, end }
}

module.exports = { servedProcesses }
