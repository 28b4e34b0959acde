'use strict'
// What the supervisor pushes to a Node process, as the connection hands it on: the processes'
// output (OUT frames: bytes, decoded here into the text Mastra's handles take), their exits, and
// the events of `logs()` streams. It also says how much has been read, as credit, so that the
// supervisor sends more. A process that writes much is offered its output in shared memory (a
// ring the supervisor writes and this side maps read-only): then only wake-ups and positions
// cross the socket, and the bytes are read straight from the mapping.

const errors = require('../../native/errors')
const protocol = require('../wire/protocol')
const { binding } = require('../../native/native')

/** Bytes read from a ring at once (as the supervisor takes them from a log). */
const RING_BATCH = 1024 * 1024

/** Whether this Node process can map the processes' output (memfd seals: Linux). */
function canShare() {
  return process.platform === 'linux' && typeof binding.openSharedOutput === 'function' && process.env.PROCVISOR_SHARED_OUTPUT !== '0'
}

class Inbox {
  constructor(conn) {
    this.conn = conn
    /**
     * Processes whose events wait for their spawn or attach to be handled, by pid: the caller
     * gets its handle (the awaited call and every continuation after it) before any output of
     * the process reaches the handle's listeners or `reader`.
     */
    this.held = new Map()
    /**
     * The decoders of each process's output, by pid: its stdout and stderr decoded in the addon,
     * in pieces of at most 64 KiB as a local process's are (larger strings land in V8's
     * large-object space, which only a full GC frees), whether the bytes came over the socket
     * or from the ring.
     */
    this.decoders = new Map()
    /** Bytes of output read and not yet given back as credit. */
    this.unacked = 0
    /** Open `logs()` streams, by id. */
    this.logs = new Map()
    /** The output rings mapped here, by pid: `{ ring, pos }` (`pos` once the supervisor says where to start). */
    this.rings = new Map()
  }

  /** Holds the events of `pid` until the continuations of the reply that names it have run. */
  hold(pid) {
    if (this.held.has(pid)) return
    this.held.set(pid, [])
    // A check phase comes after every promise reaction of this turn: the caller's `await` of
    // spawn(), Mastra's wrapper around it and whatever the caller does next without awaiting I/O.
    setImmediate(() => {
      const queue = this.held.get(pid)
      this.held.delete(pid)
      for (const m of queue) this.deliver(pid, m)
    })
  }

  /** An OUT frame or a process's event. */
  event(m) {
    if (m.t === 'out') this.unacked += m.data.length
    const pid = String(m.pid)
    const queue = this.held.get(pid)
    // Output is a view of the buffer the socket is read into: what waits is copied.
    if (queue) queue.push(m.t === 'out' ? { ...m, data: Buffer.from(m.data) } : m)
    else this.deliver(pid, m)
  }

  deliver(pid, m) {
    const to = this.conn.subscribers.get(pid)
    if (m.t === 'out') return to && this.out(pid, to, m.stream, m.data)
    if (m.kind === 'share') return this.share(pid, m.token)
    if (m.kind === 'ring') return this.ring(pid, m.after)
    if (m.kind === 'wake') return this.wake(pid, to, m.upTo)
    if (m.kind === 'exit') {
      this.unmap(pid)
      // An incomplete character at the end is U+FFFD, as in a local process's output.
      const d = this.decoders.get(pid)
      this.decoders.delete(pid)
      if (d && to) this.handOn(to, d.end())
    }
    to?.(m)
  }

  /** The decoder of the output of `pid`. */
  decoder(pid) {
    let d = this.decoders.get(pid)
    if (!d) this.decoders.set(pid, (d = new binding.NativeOutputDecoder()))
    return d
  }

  /** Bytes of output of `pid`, decoded and handed on in pieces. */
  out(pid, to, stream, data) {
    this.handOn(to, this.decoder(pid).write(stream, data))
  }

  handOn(to, chunks) {
    for (const c of chunks) to({ kind: 'out', stream: c.stream, data: c.text })
  }

  /**
   * The supervisor offers the output of `pid` in shared memory: mapped (on this thread: under a
   * millisecond, 250 ms at most), and said so. Until the supervisor answers with where to start
   * (`ring`), the bytes go on coming over the socket; if the ring cannot be taken or mapped, they
   * simply go on.
   */
  share(pid, token) {
    if (this.rings.has(pid)) return
    const ring = this.map(token)
    // Not mapped: the output goes on as bytes.
    if (!ring) return
    this.rings.set(pid, { ring, pos: undefined })
    this.conn.socket.write(protocol.encode({ t: 'shared', pid: Number(pid) }))
  }

  /** From here on the output of `pid` after sequence number `after` is read from its ring. */
  ring(pid, after) {
    const entry = this.rings.get(pid)
    if (!entry || !Number.isSafeInteger(after)) return this.broken(`a ring of process ${pid} it did not map`)
    try {
      entry.pos = entry.ring.positionAfter(after)
    } catch (e) {
      this.broken(e.message)
    }
  }

  /** The ring of `pid` holds output up to sequence number `upTo`: read, handed on, and said so. */
  wake(pid, to, upTo) {
    const entry = this.rings.get(pid)
    if (entry?.pos === undefined || !Number.isSafeInteger(upTo)) return this.broken(`a wake-up for process ${pid}, whose ring it does not read`)
    const chunks = []
    const decoder = this.decoder(pid)
    try {
      for (;;) {
        const read = entry.ring.readText(entry.pos, upTo, RING_BATCH, decoder)
        entry.pos = read.pos
        if (read.bytes === 0) break
        for (const c of read.chunks) chunks.push(c)
      }
    } catch (e) {
      return this.broken(e.message)
    }
    // Said once the bytes are copied out, before they are handed on: the process writes its
    // next output meanwhile.
    this.conn.socket.write(protocol.encode({ t: 'read', pid: Number(pid), seq: upTo }))
    if (to) this.handOn(to, chunks)
  }

  /**
   * The ring offered under `token`, mapped read-only (on this thread: under a millisecond, 250 ms
   * at most); undefined where it cannot be taken or mapped (its reader is then sent bytes).
   */
  map(token) {
    const path = this.conn.sandbox?.sharedOutput
    if (!canShare() || typeof path !== 'string' || this.conn.socket.destroyed) return undefined
    try {
      return binding.openSharedOutput(path, token)
    } catch {
      return undefined
    }
  }

  /** The supervisor broke the rules of shared output: this connection ends, as for any bad frame. */
  broken(why) {
    this.conn.refusal ??= { message: `the supervisor's shared output is broken: ${why}` }
    this.conn.socket.destroy()
  }

  unmap(pid) {
    const entry = this.rings.get(pid)
    if (!entry) return
    this.rings.delete(pid)
    entry.ring.close()
  }

  /** After each read from the socket: gives back the credit of what was read, a quarter window at a time. */
  read() {
    if (this.unacked < protocol.WINDOW / 2) return
    const n = this.unacked
    this.unacked = 0
    // At once, not with the writes of this turn: the supervisor may be waiting for it.
    if (!this.conn.socket.destroyed) this.conn.socket.write(protocol.credit(0, n))
  }

  /** A BLOB frame of a log stream: events, or its end. */
  log(m) {
    const st = this.logs.get(m.s)
    if (st) st.receive(m)
  }

  /** The supervisor is gone: every open stream ends with `error`. */
  gone(error) {
    for (const st of this.logs.values()) st.fail(error)
    this.logs.clear()
    this.held.clear()
    this.decoders.clear()
    for (const pid of [...this.rings.keys()]) this.unmap(pid)
  }
}

module.exports = { Inbox, canShare, RING_BATCH }
