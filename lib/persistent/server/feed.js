'use strict'
// The processes' output as the supervisor sends it to one client. Nothing of it is kept in JS:
// each subscription is a position in the process's own native log, taken from there in batches
// (whatever the process wrote since the last take, up to BATCH bytes, one Buffer per run of a
// stream) when the process's wake-up says there is more, and written to the socket as OUT frames
// within the credit the client grants as it reads.
//
// The producer waits for the clients that read, as it waits for a local `onStdout` listener: the
// native log holds the process back while the slowest such client is more than half a log behind
// (`setReaderHold` at that client's position), so a listener in another Node process gets every
// byte, as one in this process would. A client that cannot be sent more for STALL_MS while output
// waits for it (its credit used up, or what was sent still unread on its socket) is no longer
// waited for: the process runs on, the log drops what that client did not read, and once it
// reads again it is sent what the log still holds from then on (the gap is what it missed), then
// the exit. Either way the supervisor holds about WINDOW bytes of output per client, whatever it
// grants and however many log streams it opens (connection.js): what the client did not read
// stays in the native log, which is bounded.
//
// A process that has sent a client SHARE_AFTER bytes is offered to it in shared memory, when the
// client said it can map it (its hello) and this supervisor serves the descriptors
// (shared-output.js): the client maps the ring (the native log's output mirrored in a sealed
// memfd) and says so; once everything before the ring's first record was sent as bytes, the
// client is told where to start (`ring`), then woken with the last sequence number it may read
// (`wake`), up to WAKES_AHEAD at a time, each answered by a `read` that moves its position and
// so its hold in the ring (half the ring, 4 MiB at least, rather than half the log), as credit
// would. The same stall rule applies: one that does not answer is not waited for.

const protocol = require('../wire/protocol')

/** Bytes taken from a log at once (all a 1 MiB log holds): about the most one OUT frame carries. */
const BATCH = 1024 * 1024
/** Bytes sent to one client of one process within a turn of the event loop. */
const TURN_BYTES = 2 * 1024 * 1024
/** How long a client may leave output unread with no credit before processes stop waiting for it. */
const STALL_MS = 1000
/**
 * Bytes of a process sent to a client as bytes before it is offered the process's output in
 * shared memory: a process that writes little never costs a ring, and a spawn waits for nothing.
 */
const SHARE_AFTER = 256 * 1024
/**
 * Wake-ups a client reading shared memory may have unanswered: the next is sent while it reads
 * the last, so it does not wait a round trip between two (256 MiB to a listener on 2 vCPUs,
 * 4 MiB ring: 1.6-2.0 GB/s one at a time, 1.9-2.2 with two; four gave no more).
 */
const WAKES_AHEAD = 2

/**
 * Holds the producer of `rec` at the position of the slowest client that reads it, or nowhere:
 * the slowest of those sent bytes by the log's lag rule, the slowest of those reading its ring by
 * the ring's (which holds more, so that a client reading shared memory is waited for less often).
 */
function holdFor(rec) {
  let min = Infinity
  let ringMin = Infinity
  for (const c of rec.subscribers) {
    const s = c.feed.subs.get(rec)
    if (!s || c.feed.stalled || s.stalled) continue
    if (s.share?.state === 'ring') {
      if (s.after < ringMin) ringMin = s.after
    } else if (s.after < min) min = s.after
  }
  const hold = min === Infinity ? null : min
  const ringHold = ringMin === Infinity ? null : ringMin
  // Exited and sent to everyone: nothing is taken from this log any more.
  if (hold === null && ringHold === null && rec.result !== undefined && rec.subscribers.size === 0 && rec.streams.size === 0 && !rec.unwoken) {
    rec.unwoken = true
    rec.core.native.setReaderWake(null)
  }
  if (ringHold !== rec.ringHold) {
    rec.ringHold = ringHold
    rec.core.native.setRingHold(ringHold)
  }
  if (hold === rec.hold) return
  rec.hold = hold
  try {
    rec.core.native.setReaderHold(hold)
  } catch {
    // A position the log no longer has: the next read moves it on.
  }
}

/**
 * Offers the ring of `rec` to one more reader (a client's subscription, or a `logs()` stream):
 * the offer (made at the first), or null for a process that has exited or a ring that cannot be
 * had, whose output then goes as bytes.
 */
function share(rec) {
  const offer = rec.result === undefined ? rec.core.native.shareOutput() : null
  if (offer) rec.sharing = (rec.sharing ?? 0) + 1
  return offer
}

/** One reader of the ring of `rec` is done with it. */
function unshare(rec) {
  // The last one is gone: the supervisor stops writing the ring.
  if (--rec.sharing === 0) rec.core.native.unshareOutput()
}

class Feed {
  constructor(client) {
    this.client = client
    /** Bytes of output this client may be sent before it grants more. */
    this.credit = protocol.WINDOW
    /** Subscribed processes (records) → { after: the log position sent up to, later }. */
    this.subs = new Map()
    /** The same records by pid, for the client's answers about shared output. */
    this.byPid = new Map()
    /** Processes no longer wait for this client (STALL_MS unable to take output, and not reading). */
    this.stalled = false
    this.timer = undefined
    /** The client read all that was queued for it since the stall timer was armed. */
    this.drained = false
  }

  /** Sends the output of `rec` after log position `after`, then its exit. */
  add(rec, after) {
    if (this.subs.has(rec) || this.client.socket.destroyed) return holdFor(rec)
    // `sent`: bytes sent as bytes; `share`: the offer of its ring and, once the client maps it,
    // the last wake-up it was sent (`upTo`) and those it has not answered (`unanswered`).
    const sub = { after, later: false, sent: 0, share: undefined, stalled: false }
    this.subs.set(rec, sub)
    this.byPid.set(rec.pid, rec)
    rec.subscribers.add(this.client)
    holdFor(rec)
    this.next(rec, sub)
  }

  remove(rec) {
    const sub = this.subs.get(rec)
    if (!sub) return
    clearTimeout(sub.share?.timer)
    if (sub.share && sub.share.state !== 'none') unshare(rec)
    this.subs.delete(rec)
    if (this.byPid.get(rec.pid) === rec) this.byPid.delete(rec.pid)
    rec.subscribers.delete(this.client)
    holdFor(rec)
  }

  close() {
    clearTimeout(this.timer)
    for (const rec of [...this.subs.keys()]) this.remove(rec)
  }

  /** The client read `n` more bytes (never more than the window, which the connection checked). */
  grant(n) {
    this.credit += n
    this.resume()
  }

  /** Whether output can go to the client now. */
  ready() {
    return this.credit > 0 && this.client.writable()
  }

  /**
   * Goes on with every subscription (credit came, the client read what was queued, or the
   * replies queued before output went out). A client that can take output again is waited for
   * again; one that only says so (credit it does not read) is not.
   */
  resume() {
    if (this.ready()) {
      clearTimeout(this.timer)
      this.timer = undefined
      if (this.stalled) {
        this.stalled = false
        for (const rec of this.subs.keys()) holdFor(rec)
      }
    }
    for (const [rec, sub] of this.subs) this.next(rec, sub)
  }

  /**
   * `rec` has new output, or has exited (its exit goes once this client was sent its output up
   * to that end).
   */
  woken(rec) {
    const sub = this.subs.get(rec)
    if (sub) this.next(rec, sub)
  }

  next(rec, sub) {
    if (this.subs.get(rec) !== sub || !this.client.open()) return
    const share = sub.share
    if (share?.state === 'accepted' && sub.after >= share.firstSeq - 1) {
      // Everything before the ring's first record was sent as bytes: the rest is read from it.
      share.state = 'ring'
      this.client.send({ t: 'event', pid: rec.pid, kind: 'ring', after: sub.after })
    }
    if (share?.state === 'ring') return this.wake(rec, sub)
    const native = rec.core.native
    // Output after the end a Mastra handle reports (a child left behind) is not the handle's.
    const until = rec.result === undefined ? undefined : rec.finalSeq
    let taken = 0
    for (;;) {
      if (!this.client.writable()) return this.blocked(rec, sub)
      if (rec.result !== undefined && sub.after >= rec.finalSeq) return this.exit(rec)
      if (this.credit <= 0) return this.blocked(rec, sub)
      if (taken >= TURN_BYTES) return this.later(rec, sub)
      const take = native.takeOutput(sub.after, Math.min(this.credit, BATCH), until)
      // Nothing new: the process's wake-up (`woken`) comes with its next output or its end.
      if (take.next === sub.after) return
      sub.after = take.next
      for (const run of take.runs) {
        const n = run.data.length
        this.client.writeOut(rec.pidNumber, run.stream, [run.data], n)
        this.credit -= n
        taken += n
      }
      sub.sent += taken
      if (sub.sent >= SHARE_AFTER && !sub.share && this.client.shares) this.offer(rec, sub)
      holdFor(rec)
    }
  }

  /** Offers the client the process's output in shared memory, from the ring's first record on. */
  offer(rec, sub) {
    const offer = share(rec)
    if (!offer) {
      sub.share = { state: 'none' }
      return
    }
    sub.share = { state: 'offered', firstSeq: offer.firstSeq, upTo: 0, unanswered: [], timer: undefined }
    this.client.send({ t: 'event', pid: rec.pid, kind: 'share', token: offer.token })
  }

  /**
   * A client's word on shared output: `{ t: 'shared', pid }` once it mapped the ring it was
   * offered, `{ t: 'read', pid, seq }` once it read the output up to the wake-up's `seq`. Returns
   * why the client is refused (it answers what it was not asked, or claims output it was never
   * told of), or nothing.
   */
  shared(m) {
    if ((typeof m.pid !== 'string' && typeof m.pid !== 'number') || (m.t === 'read' && !Number.isSafeInteger(m.seq))) {
      return `a ${m.t} frame names a process and a whole sequence number: ${JSON.stringify(m).slice(0, 200)}`
    }
    // A process no longer sent to this client (exited, unsubscribed): nothing to do.
    const rec = this.byPid.get(String(m.pid))
    const sub = rec && this.subs.get(rec)
    if (!sub || !sub.share) return
    const share = sub.share
    if (m.t === 'shared') {
      if (share.state !== 'offered') return `the shared output of ${m.pid} was not offered, or was accepted before`
      share.state = 'accepted'
      return this.next(rec, sub)
    }
    if (share.state !== 'ring') return `a read of the shared output of ${m.pid}, which is not read from shared memory`
    if (m.seq > share.upTo || m.seq < 0) return `a read of the output of ${m.pid} up to ${m.seq}, past the ${share.upTo} it was told of`
    // An answer to a wake-up whose later one was answered already: nothing new.
    if (m.seq <= sub.after) return
    while (share.unanswered.length > 0 && share.unanswered[0] <= m.seq) share.unanswered.shift()
    this.armStall(rec, sub)
    sub.after = m.seq
    sub.stalled = false
    holdFor(rec)
    this.next(rec, sub)
  }

  /**
   * The output of a client that reads it from shared memory: wake-ups naming the last sequence
   * number it may read (up to the process's Mastra end, as bytes would stop there), up to
   * WAKES_AHEAD of them unanswered, so that the next is on its way while the client reads (one
   * at a time, the client waited a round trip after each); the exit once it read that far.
   */
  wake(rec, sub) {
    const share = sub.share
    if (rec.result !== undefined && sub.after >= rec.finalSeq) return this.exit(rec)
    if (share.unanswered.length >= WAKES_AHEAD) return
    const last = rec.core.native.readerSeen()
    const upTo = rec.result === undefined ? last : Math.min(last, rec.finalSeq)
    // Nothing new: the process's wake-up (`woken`) comes with its next output or its end.
    if (upTo <= share.upTo) return
    share.unanswered.push(upTo)
    share.upTo = upTo
    this.client.send({ t: 'event', pid: rec.pid, kind: 'wake', upTo })
    this.armStall(rec, sub)
  }

  /** One that leaves a wake-up unanswered for STALL_MS (since its last answer) is no longer waited for. */
  armStall(rec, sub) {
    const share = sub.share
    clearTimeout(share.timer)
    share.timer = undefined
    if (share.unanswered.length === 0) return
    share.timer = setTimeout(() => {
      share.timer = undefined
      if (share.unanswered.length === 0 || this.subs.get(rec) !== sub) return
      sub.stalled = true
      holdFor(rec)
    }, STALL_MS)
    share.timer.unref()
  }

  /** Output of `rec` waits for a client that cannot take it now. */
  blocked(rec, sub) {
    if (sub.after < rec.core.native.lastSeq()) this.stall()
  }

  /** Goes on at the next turn of the event loop: other clients and calls get theirs first. */
  later(rec, sub) {
    if (sub.later) return
    sub.later = true
    setImmediate(() => {
      sub.later = false
      this.next(rec, sub)
    })
  }

  exit(rec) {
    // Mastra's note on a timeout is the end of stderr, before the exit, as in a local sandbox.
    if (rec.note) {
      const note = Buffer.from(rec.note)
      this.client.writeOut(rec.pidNumber, 1, [note], note.length)
      // The client counts it as output read, and gives it back as credit.
      this.credit -= note.length
    }
    this.client.send({ t: 'event', pid: rec.pid, kind: 'exit', result: rec.result })
    // After the exit is on its way: letting go of the log (the hold, the wake-up) can wait.
    this.remove(rec)
  }

  stall() {
    if (this.timer || this.stalled) return
    this.drained = false
    this.timer = setTimeout(() => {
      this.timer = undefined
      if (this.ready()) return
      // Still reading what went before the output (a long reply in parts, say): waited for on.
      if (this.drained) return this.stall()
      this.stalled = true
      for (const rec of this.subs.keys()) holdFor(rec)
    }, STALL_MS)
    this.timer.unref()
  }
}

module.exports = { Feed, holdFor, share, unshare, SHARE_AFTER, WAKES_AHEAD, BATCH, TURN_BYTES }
