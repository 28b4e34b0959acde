'use strict'
// One client of a persistent sandbox's supervisor: its frames read and checked, its calls served,
// its replies and the processes' output written to it. Whatever a client sends, the worst that
// happens is that this client is disconnected; the supervisor, its processes and its other
// clients go on.

const errors = require('../../native/errors')
const protocol = require('../wire/protocol')
const calls = require('./calls')
const { attachments, encodeValue } = require('../wire/values')
const { Feed } = require('./feed')
const { FrameReader } = require('../wire/reader')

const { SANDBOX_PROTOCOL_MISMATCH } = errors.codes

/** How long a client told why it is disconnected has to read that before its socket is closed. */
const REFUSAL_GRACE_MS = 1000
/**
 * Bytes of replies queued for a client past which its next calls are not read until it has read
 * what is queued: a client that asks and does not read cannot grow the supervisor's memory.
 * Output is bounded apart, by the client's credit (feed.js) and OUTPUT_BOUND.
 */
const CALLS_BOUND = 8 * 1024 * 1024
/**
 * Bytes queued on a client's socket past which no output is written to it, whatever its credit
 * says: its credit bounds each stream (one window each), not their sum, and a client that opens
 * many log streams and reads none of them would otherwise cost a window apiece. One window: a
 * client that reads has the rest of it in the kernel's buffer and never waits on this.
 */
const OUTPUT_BOUND = protocol.WINDOW
/**
 * Bytes queued for a client past which it is disconnected: replies it asked for and does not
 * read. Above the largest single reply (a JavaScript string holds at most 512 MiB).
 */
const QUEUE_LIMIT = 1024 * 1024 * 1024
/** A call's value and what must follow its reply: the output of the process it names, say. */
class Followed {
  constructor(value, after) {
    this.value = value
    this.after = after
  }
}

function followed(value, after) {
  return new Followed(value, after)
}

class Client {
  constructor(socket) {
    this.socket = socket
    this.greeted = false
    this.refused = false
    /** It maps the processes' output when offered (its hello says so, and this supervisor can). */
    this.shares = false
    /** Open `logs()` streams of this client, by id. */
    this.streams = new Map()
    this.nextStream = 1
    /** The processes whose output and exit this client is sent. */
    this.feed = new Feed(this)
    /** Why this client's calls are not read now ('replies', 'input'); its socket is paused while any holds. */
    this.unread = new Set()
    /** Bytes of input of its calls that their processes have not read yet (protocol.INPUT_WINDOW). */
    this.input = 0
    /**
     * Frames waiting behind a reply sent in parts (`{ id, body, at, count }`), which goes out a
     * part at a time as the client reads, so that it is never all queued at once.
     */
    this.outbox = []
    this.outboxBytes = 0
    socket.on('drain', () => {
      this.feed.drained = true
      this.flush()
    })
  }

  queued() {
    return this.socket.writableLength + this.outboxBytes
  }

  /** Whether anything is still written to this client. */
  open() {
    return !this.socket.destroyed && !this.refused
  }

  /**
   * Whether output may be written now: not while a reply in parts is under way (it goes first),
   * nor while the client has not read what is queued ('drain' goes on).
   */
  writable() {
    return this.outbox.length === 0 && this.socket.writableLength < OUTPUT_BOUND && this.open()
  }

  send(message) {
    this.write([protocol.encode(message)])
  }

  /** Sends `message` with its Buffers as bytes beside its JSON; returns how many bytes those were. */
  sendValue(message) {
    const att = attachments()
    const pieces = protocol.body(encodeValue(message, att), att)
    this.write([protocol.lengthOf(pieces.reduce((n, p) => n + p.length, 0)), ...pieces])
    return att.size
  }

  /** An OUT frame: `size` bytes of `stream` of process `pid`, in the Buffers `data`. */
  writeOut(pid, stream, data, size) {
    // Not `writable()`: the runs of one take go whole, once the feed found the client writable.
    if (!this.open()) return
    // Not held for the end of the turn: a flood goes out as it is taken, while the client reads.
    this.socket.cork()
    this.socket.write(protocol.outHead(pid, stream, size))
    for (const d of data) this.socket.write(d)
    this.socket.uncork()
  }

  write(pieces) {
    if (this.socket.destroyed || this.refused) return
    if (this.outbox.length > 0) {
      for (const p of pieces) this.outbox.push(p)
      this.outboxBytes += pieces.reduce((n, p) => n + p.length, 0)
    } else {
      // At once, not batched to the end of the turn: a reply written before the rest of this
      // turn's work (the subscription that follows a spawn's reply, say) is read sooner.
      this.socket.cork()
      for (const p of pieces) this.socket.write(p)
      this.socket.uncork()
    }
    this.check()
  }

  check() {
    if (this.queued() > QUEUE_LIMIT) this.socket.destroy()
    else if (this.queued() > CALLS_BOUND) this.stopReading('replies')
  }

  stopReading(why) {
    if (this.unread.size === 0) this.socket.pause()
    this.unread.add(why)
  }

  goOnReading(why) {
    if (this.unread.delete(why) && this.unread.size === 0) this.socket.resume()
  }

  /** A call with `n` bytes of input for a process: held, as far as this client goes, until written. */
  inputStarted(n) {
    this.input += n
    if (this.input > protocol.INPUT_WINDOW) this.stopReading('input')
  }

  inputSettled(n) {
    this.input -= n
    if (this.input <= protocol.INPUT_WINDOW) this.goOnReading('input')
  }

  /** A reply: one frame, or parts when its body is larger than PART_BYTES. Throws if it cannot be encoded. */
  reply(message) {
    const att = attachments()
    const pieces = protocol.body(message.value === undefined ? message : { ...message, value: encodeValue(message.value, att) }, att)
    const size = pieces.reduce((n, p) => n + p.length, 0)
    if (size <= protocol.PART_BYTES) return this.write([protocol.lengthOf(size), ...pieces])
    if (this.socket.destroyed || this.refused) return
    this.outbox.push({ id: message.id, body: Buffer.concat(pieces, size), at: 0, count: 0 })
    this.outboxBytes += size
    this.flush()
    this.check()
  }

  /** Moves frames from the outbox to the socket while it holds less than a part; then the output goes on. */
  flush() {
    while (this.outbox.length > 0 && this.socket.writableLength < protocol.PART_BYTES && !this.socket.destroyed) {
      const item = this.outbox[0]
      if (Buffer.isBuffer(item)) {
        this.outbox.shift()
        this.outboxBytes -= item.length
        this.socket.write(item)
      } else if (item.at < item.body.length) {
        const data = item.body.subarray(item.at, item.at + protocol.PART_BYTES)
        item.at += data.length
        item.count++
        this.outboxBytes -= data.length
        for (const p of protocol.part(item.id, data)) this.socket.write(p)
      } else {
        this.outbox.shift()
        this.socket.write(protocol.encode({ t: 'reply', id: item.id, parts: item.count }))
      }
    }
    if (this.queued() <= CALLS_BOUND / 2) this.goOnReading('replies')
    if (this.writable()) {
      this.feed.resume()
      for (const st of this.streams.values()) st.next()
    }
  }

  /**
   * A CREDIT frame: more bytes for the output (stream 0) or for one log stream. A client gives
   * back what it read, so what it is owed never passes the window: credit past it is a client
   * that does not count what it reads, and is told so and disconnected.
   */
  credit(m) {
    const to = m.stream === 0 ? this.feed : this.streams.get(m.stream)
    // A stream closed since the client granted: nothing more is sent on it.
    if (!to) return
    if (m.n > protocol.WINDOW - to.credit) {
      const owed = Math.max(0, protocol.WINDOW - to.credit)
      const why = `credit of ${m.n} bytes for stream ${m.stream}, which was sent ${owed} bytes not given back yet`
      return this.refuse(SANDBOX_PROTOCOL_MISMATCH, `${why}: a client grants the bytes it read, at most a window of ${protocol.WINDOW}`)
    }
    to.grant(m.n)
  }

  /** Tells the client why it is disconnected, then disconnects it; nothing it sends is read. */
  refuse(code, message, extra) {
    if (this.refused || this.socket.destroyed) return
    this.refused = true
    this.socket.end(protocol.encode({ t: 'refused', code, message, ...extra }))
    setTimeout(() => this.socket.destroy(), REFUSAL_GRACE_MS).unref()
  }
}

/**
 * Serves `socket`, a connection already known to be this user's. `host` holds `ops` (a
 * null-prototype table of the calls), `greeting()` (what the hello says of the sandbox),
 * `opened(client)` once the client's hello is accepted and `closed(client)` when it is gone.
 * Returns what takes the bytes read from the socket, into one buffer read into again and again
 * (`onread`): a view valid during the call only, whose frames are copied where they outlive it.
 */
function serveSocket(socket, host) {
  const client = new Client(socket)
  const frames = new FrameReader({ reused: true })
  socket.on('close', () => {
    client.feed.close()
    if (client.greeted) host.closed(client)
    for (const st of [...client.streams.values()]) st.close()
  })
  return (chunk) => {
    if (client.refused) return
    let messages
    try {
      messages = frames.push(chunk)
    } catch (e) {
      client.refuse(e.code || SANDBOX_PROTOCOL_MISMATCH, e.message)
      return
    }
    for (const m of messages) {
      if (client.refused || socket.destroyed) return
      if (!client.greeted) {
        const why = protocol.helloMismatch(m, 'the client')
        if (why) {
          client.refuse(SANDBOX_PROTOCOL_MISMATCH, why, { protocol: protocol.PROTOCOL, version: protocol.VERSION })
          return
        }
        client.greeted = true
        // A client that can map the processes' output is offered it (feed.js).
        client.shares = m.shared === true && host.sharesOutput?.() === true
        host.opened(client)
        client.send(protocol.hello({ sandbox: host.greeting() }))
        continue
      }
      if (m.t === 'credit') {
        client.credit(m)
        continue
      }
      if (m.t === 'logShared' || m.t === 'logRead' || m.t === 'logLost') {
        if (!Number.isSafeInteger(m.s)) return client.refuse(SANDBOX_PROTOCOL_MISMATCH, `a ${m.t} frame names a log stream by its number`)
        // A stream closed meanwhile: nothing to do.
        const why = client.streams.get(m.s)?.ringWord(m)
        if (why) return client.refuse(SANDBOX_PROTOCOL_MISMATCH, why)
        continue
      }
      if (m.t === 'shared' || m.t === 'read') {
        const why = client.feed.shared(m)
        if (why) return client.refuse(SANDBOX_PROTOCOL_MISMATCH, why)
        continue
      }
      const why = calls.unanswerable(m)
      if (why) {
        client.refuse(SANDBOX_PROTOCOL_MISMATCH, why)
        return
      }
      serve(host, client, m).catch(() => socket.destroy())
    }
  }
}

/** Answers call `m`: its value, or the typed error of this call alone; nothing for a quiet call. */
async function serve(host, client, m) {
  let value
  try {
    const [op, args] = calls.resolve(host.ops, m, protocol.VERSION)
    const input = calls.inputBytes(m.op, args)
    client.inputStarted(input)
    try {
      value = await op(client, args)
    } finally {
      client.inputSettled(input)
    }
  } catch (e) {
    if (m.quiet !== true) client.reply({ t: 'reply', id: m.id, error: protocol.fromError(e) })
    return
  }
  let after
  if (value instanceof Followed) {
    after = value.after
    value = value.value
  }
  if (m.quiet === true) return after?.()
  try {
    client.reply({ t: 'reply', id: m.id, value })
  } catch (e) {
    // Larger than a string can hold: this call fails, the connection goes on.
    const error = new errors.SandboxProtocolError(`the reply to ${m.op} cannot be sent: ${e.message}`)
    client.reply({ t: 'reply', id: m.id, error: protocol.fromError(error) })
  } finally {
    // Whatever became of the reply: a spawn's process is watched to its end all the same.
    after?.()
  }
}

module.exports = { serveSocket, followed }
