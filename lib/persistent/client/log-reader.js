'use strict'
// A `logs()` stream of a persistent sandbox's process (or `output()` of a terminal), as this
// Node process reads it. The supervisor pushes its events as bytes within the credit this side
// gives back as the stream is read: a reader that stops reading stops the sending, as a local
// reader stops reading the log (and learns by `truncated` what it missed). A followed stream that
// has carried much is offered the process's ring (a mapping of the whole log, see
// server/log-stream.js): from then on only wake-ups cross the socket, and the events are read
// straight from the mapping, as far as the reader keeps up. One that falls behind what the ring
// holds says where it lost track, and the events come as bytes again from there.

const errors = require('../../native/errors')
const protocol = require('../wire/protocol')
const { logEvent } = require('../../process/observe')
const { RING_BATCH } = require('./inbox')

/**
 * Bytes taken off a stream's queue, of those that came as bytes: what is given back as credit.
 * The queue holds events of both kinds, in the order they came, and is measured as one.
 */
class Taken {
  constructor() {
    /** Runs of bytes queued in order: `[fromRing, bytes]`. */
    this.runs = []
    this.queued = 0
    this.asBytes = 0
  }

  add(fromRing, n) {
    if (n === 0) return
    const last = this.runs[this.runs.length - 1]
    if (last && last[0] === fromRing) last[1] += n
    else this.runs.push([fromRing, n])
    this.queued += n
  }

  /** The queue now holds `inQueue` bytes: what left it is counted, by where it came from. */
  left(inQueue) {
    let gone = this.queued - Math.max(0, inQueue)
    this.queued -= gone
    while (gone > 0 && this.runs.length > 0) {
      const run = this.runs[0]
      const n = Math.min(gone, run[1])
      if (!run[0]) this.asBytes += n
      run[1] -= n
      gone -= n
      if (run[1] === 0) this.runs.shift()
    }
  }
}

async function openLogs(conn, pid, options, signal) {
  let controller
  let id
  let open = true
  let returned = 0
  const taken = new Taken()
  /**
   * The ring, once offered: `{ ring, processId, pos, expect, upTo, said, lost }` (the next
   * sequence number due, the last one a wake-up named, the last one answered).
   */
  let share
  // An open stream keeps Node alive, as a read waiting for the next events would.
  let release = () => {}
  const unmap = () => {
    share?.ring?.close()
    if (share) share.ring = undefined
  }
  /** Nothing more is read: Node may exit, the ring is let go, the connection forgets the stream. */
  const letGo = () => {
    open = false
    release()
    unmap()
    if (id !== undefined) conn.inbox.logs.delete(id)
  }
  /** Ended on this side: the supervisor is told, and stops sending. */
  const close = () => {
    if (!open) return
    letGo()
    if (id !== undefined) conn.call('logsClose', { stream: id }).catch(() => {})
  }
  const broken = (why) => conn.inbox.broken(`log stream ${id}: ${why}`)
  const say = (m) => {
    if (!conn.socket.destroyed) conn.socket.write(protocol.encode({ s: id, ...m }))
  }

  /** The supervisor offers the process's ring: mapped if this side can, and said either way. */
  const offered = (token, processId) => {
    if (share || typeof processId !== 'string') return broken('a ring offered twice, or for no process')
    // Not mapped: the events go on coming as bytes.
    const ring = conn.inbox.map(token)
    share = { ring, processId, pos: undefined, expect: 0, upTo: 0, said: 0, lost: false }
    say({ t: 'logShared', mapped: ring !== undefined })
  }

  /** Reads the ring up to the last wake-up while the reader keeps up; says how far it read. */
  const drain = () => {
    const s = share
    // Not within itself: an enqueue that meets a waiting read calls `pull` at once.
    if (!open || !s?.ring || s.pos === undefined || s.lost || s.draining) return
    s.draining = true
    try {
      drainRing(s)
    } finally {
      s.draining = false
    }
  }
  const drainRing = (s) => {
    while (s.expect <= s.upTo && controller.desiredSize > 0) {
      let read
      try {
        read = s.ring.readEvents(s.pos, s.upTo, RING_BATCH, s.processId)
      } catch (e) {
        return broken(e.message)
      }
      // The sequence numbers of a ring have no gaps: one that skips lost the events between.
      if (read.truncated || (read.events.length > 0 && read.events[0].seq !== s.expect)) {
        s.lost = true
        unmap()
        say({ t: 'logLost', after: s.expect - 1 })
        return
      }
      if (read.events.length === 0) break
      s.pos = read.pos
      s.expect = read.events[read.events.length - 1].seq + 1
      for (const e of read.events) {
        const ev = logEvent(e)
        if (ev.data) taken.add(true, ev.data.length)
        controller.enqueue(ev)
        if (ev.type === 'terminal') {
          close()
          controller.close()
          return
        }
        if (s.lost || !open) return
      }
    }
    if (s.expect > s.upTo && s.upTo > s.said) {
      s.said = s.upTo
      say({ t: 'logRead', seq: s.upTo })
    }
  }

  const st = {
    receive(m) {
      if (m.done) {
        letGo()
        if (m.error) controller.error(protocol.toError(m.error))
        else controller.close()
        return
      }
      if (m.share !== undefined) return offered(m.share, m.id)
      if (m.ring !== undefined || m.upTo !== undefined) {
        // Wake-ups sent before the supervisor learnt that this side lost track: passed over.
        if (share?.lost) return
        if (!share?.ring) return broken('a wake-up of a ring it did not map')
        const n = m.ring ?? m.upTo
        if (!Number.isSafeInteger(n) || n < 0) return broken(`a sequence number ${n}`)
        if (m.ring !== undefined) {
          try {
            share.pos = share.ring.positionAfter(n)
          } catch (e) {
            return broken(e.message)
          }
          share.expect = n + 1
        } else if (n > share.upTo) share.upTo = n
        return drain()
      }
      if (!Array.isArray(m.events)) return
      for (const e of m.events) {
        if (e.data) taken.add(false, e.data.length)
        controller.enqueue(e)
      }
    },
    fail(error) {
      letGo()
      controller.error(error)
    },
  }
  const stream = new ReadableStream(
    {
      start(c) {
        controller = c
      },
      pull(c) {
        // Bytes the reader has taken off the queue: those that came as bytes given back once a
        // quarter window adds up.
        taken.left(protocol.WINDOW - c.desiredSize)
        if (open && id !== undefined && taken.asBytes - returned >= protocol.WINDOW / 2) {
          conn.write([protocol.credit(id, taken.asBytes - returned)])
          returned = taken.asBytes
        }
        drain()
      },
      cancel: close,
    },
    { highWaterMark: protocol.WINDOW, size: (e) => (e && e.data ? e.data.length : 0) },
  )
  // Registered as the reply is read, before any later frame: the first events follow at once.
  // A process's log by its pid, or a terminal's output by its id (`{ terminal: id }`).
  const [op, args] = typeof pid === 'object' ? ['terminalLogsOpen', { id: pid.terminal, options }] : ['logsOpen', { pid, options }]
  id = await conn.call(op, args, (value) => {
    id = value
    conn.inbox.logs.set(id, st)
    release = conn.hold()
  })
  if (signal) {
    const abort = () => {
      if (!open) return
      close()
      controller.error(new errors.ProcessAbortedError('logs was aborted'))
    }
    if (signal.aborted) abort()
    else signal.addEventListener('abort', abort, { once: true })
  }
  return stream
}

module.exports = { openLogs }
