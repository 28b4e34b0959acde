'use strict'
// One `logs()` stream of a client: the events the Processes API's `logs()` would read, read from
// the process's log when its wake-up says there is more, and pushed as BLOB frames (the data as
// bytes beside a small JSON) within the credit the client grants as its stream is read. Like a
// local `logs()` reader it never holds the process back: one that falls behind the bounded log
// is told so by a `truncated` event, unless the process writes its log to files (`rec.logFiles`):
// then what memory no longer holds is read from them, off the JS thread, which serves every
// client meanwhile.
//
// A followed stream of a process that has sent it SHARE_AFTER bytes is offered the process's
// ring (feed.js), which holds the whole log from its first record on, the events that are not
// output included: once the client mapped it and everything before the ring's first record was
// sent as bytes, the client is told where to start (`ring`) and then only woken with the last
// sequence number it may read (`upTo`), up to WAKES_AHEAD at a time, each answered by a
// `logRead`. Nothing holds the process for it: a client that falls more than the ring behind
// says where it lost track (`logLost`), and the stream goes on as bytes from there, from the
// files when the log has them.

const protocol = require('../wire/protocol')
const { logEvents } = require('../../process/observe')
const { share, unshare, SHARE_AFTER, WAKES_AHEAD, BATCH, TURN_BYTES } = require('./feed')

class LogStream {
  constructor(client, id, rec, start) {
    this.client = client
    this.id = id
    this.rec = rec
    this.after = start.after
    this.follow = start.follow
    this.credit = protocol.WINDOW
    this.later = false
    this.done = false
    /** A read of the files under way: nothing else is read until it is sent. */
    this.reading = false
    /** Bytes sent as bytes, until the ring is offered. */
    this.sent = 0
    /**
     * The ring: `{ state: 'offered' | 'accepted' | 'ring' | 'none', firstSeq, upTo, unanswered }`,
     * once offered; 'none' once declined or lost, for good.
     */
    this.share = undefined
    rec.streams.add(this)
  }

  grant(n) {
    this.credit += n
    this.next()
  }

  next() {
    if (this.done || this.reading) return
    const share = this.share
    if (share?.state === 'accepted' && this.after >= share.firstSeq - 1) {
      // Everything before the ring's first record was sent as bytes: the rest is read from it.
      share.state = 'ring'
      this.client.send({ t: 'log', s: this.id, ring: this.after })
    }
    if (share?.state === 'ring') return this.wake()
    const native = this.rec.core.native
    let sent = 0
    // Checked at each batch: many streams of one client share what its socket may queue.
    while (this.credit > 0 && this.client.writable()) {
      if (sent >= TURN_BYTES) {
        if (this.later) return
        this.later = true
        return setImmediate(() => {
          this.later = false
          this.next()
        })
      }
      const max = Math.min(this.credit, BATCH)
      const read = native.readLogNow(this.after, max)
      if (read.truncated && this.rec.logFiles) return this.fromFiles(max)
      const n = this.send(read)
      if (n < 0) return
      sent += n
      this.sent += n
      if (this.sent >= SHARE_AFTER && !this.share) this.offer()
    }
  }

  /**
   * Offers the process's ring to a client that can map it, for a followed stream of a running
   * process (a terminal's output, read by people, stays bytes).
   */
  offer() {
    const rec = this.rec
    const offer = this.follow && this.client.shares && rec.subscribers ? share(rec) : null
    if (!offer) {
      this.share = { state: 'none' }
      return
    }
    this.share = { state: 'offered', firstSeq: offer.firstSeq, upTo: 0, unanswered: [] }
    this.client.send({ t: 'log', s: this.id, share: offer.token, id: rec.core.id })
  }

  /** The ring, mapped or not, is no longer read by this stream. */
  unshare() {
    const share = this.share
    if (!share || share.state === 'none') return
    this.share = { state: 'none' }
    unshare(this.rec)
  }

  /** Wakes the client with the last sequence number it may read from the ring. */
  wake() {
    const share = this.share
    if (share.unanswered.length >= WAKES_AHEAD) return
    // Answers the process's wake-up: what is appended after this wakes the stream again.
    const upTo = this.rec.core.native.readerSeen()
    if (upTo <= share.upTo) return
    share.unanswered.push(upTo)
    share.upTo = upTo
    this.client.send({ t: 'log', s: this.id, upTo })
  }

  /**
   * The client's word on the ring: `{ t: 'logShared', s, mapped }` once it mapped it (or could
   * not), `{ t: 'logRead', s, seq }` once it read up to a wake-up's `seq`, `{ t: 'logLost', s,
   * after }` when the writer overtook it after `after`. Returns why the client is refused (it
   * answers what it was not asked, or claims events it was never told of), or nothing.
   */
  ringWord(m) {
    const share = this.share
    if (m.t === 'logShared') {
      if (share?.state !== 'offered') return `the ring of log stream ${m.s} was not offered, or was answered before`
      if (m.mapped !== true) return this.unshare()
      share.state = 'accepted'
      return this.next()
    }
    const seq = m.t === 'logRead' ? m.seq : m.after
    if (!Number.isSafeInteger(seq)) return `a ${m.t} frame names a whole sequence number: ${JSON.stringify(m).slice(0, 200)}`
    // Lost meanwhile: the client answers what it read before it knew.
    if (share?.state === 'none') return
    if (share?.state !== 'ring') return `a ${m.t} of log stream ${m.s}, which is not read from the ring`
    if (seq > share.upTo || seq < 0) return `a ${m.t} of log stream ${m.s} at ${seq}, past the ${share.upTo} it was told of`
    if (m.t === 'logLost') {
      // Where the client lost track: the stream goes on as bytes from there.
      this.after = Math.max(0, seq)
      this.unshare()
      return this.next()
    }
    if (seq <= this.after) return
    while (share.unanswered.length > 0 && share.unanswered[0] <= seq) share.unanswered.shift()
    this.after = seq
    this.next()
  }

  /**
   * Reads on from the files (past what memory holds), then goes on as before. One read of the
   * files at a time per client: a read holds up to a batch until it is sent, whatever the
   * socket's backlog by then, and many streams of one client must not each hold one.
   */
  fromFiles(max) {
    const client = this.client
    if (client.readingFiles) return
    client.readingFiles = true
    this.reading = true
    const finished = () => {
      this.reading = false
      client.readingFiles = false
      // The client's other streams that waited for this read go on.
      for (const st of client.streams.values()) if (st !== this) st.next()
    }
    this.rec.core.native.readLog(this.after, max).then(
      (read) => {
        const sent = this.done ? -1 : this.send(read)
        finished()
        if (sent >= 0) this.next()
      },
      (e) => {
        finished()
        if (!this.done) this.end({ error: protocol.fromError(e) })
      },
    )
  }

  /** Sends one read's events; the bytes sent, or -1 once nothing more is to be read now. */
  send(read) {
    this.after = read.next
    if (read.events.length === 0 && !read.truncated) {
      // Caught up: the process's wake-up brings the next events, or this is the end.
      if (read.closed || !this.follow) this.end({})
      return -1
    }
    const batch = logEvents(this.rec.core.native, read)
    const n = this.client.sendValue({ t: 'log', s: this.id, events: batch.events })
    this.credit -= n
    if (batch.end) {
      this.end({})
      return -1
    }
    return n
  }

  end(extra) {
    this.close()
    this.client.send({ t: 'log', s: this.id, done: true, ...extra })
  }

  close() {
    this.done = true
    this.unshare()
    this.rec.streams.delete(this)
    this.client.streams.delete(this.id)
  }
}

module.exports = { LogStream }
