'use strict'
// One client of a persistent sandbox's supervisor: its frames read and checked, its calls served,
// its replies and the processes' output written to it. Whatever a client sends, the worst that
// happens is that this client is disconnected; the supervisor, its processes and its other
// clients go on.

const errors = require('../errors')
const protocol = require('./protocol')
const calls = require('./calls')
const { encodeValue } = require('./values')

const { SANDBOX_PROTOCOL_MISMATCH } = errors.codes

/** How long a client told why it is disconnected has to read that before its socket is closed. */
const REFUSAL_GRACE_MS = 1000
/**
 * Bytes queued for a client past which it is behind: the processes' output is no longer queued
 * for it, nor are its next calls read, until it has read what is queued. A client that stopped
 * reading (a Node process stopped by SIGSTOP, say) otherwise grew the supervisor's memory by
 * every byte its processes wrote.
 */
const OUTPUT_BOUND = 8 * 1024 * 1024
/** Bytes of one event of output sent to a client catching up. */
const CATCH_UP_PIECE = 256 * 1024
/**
 * Bytes queued for a client past which it is disconnected: replies it asked for and does not
 * read. Above the largest single reply (a JavaScript string holds at most 512 MiB).
 */
const QUEUE_LIMIT = 1024 * 1024 * 1024

/** The frame of a message's JSON text. */
function frameOf(text) {
  const body = Buffer.from(text, 'utf8')
  const head = Buffer.allocUnsafe(4)
  head.writeUInt32BE(body.length, 0)
  return Buffer.concat([head, body])
}

class Client {
  constructor(socket) {
    this.socket = socket
    this.greeted = false
    this.refused = false
    /** Open `logs()` streams of this client, by id. */
    this.streams = new Map()
    this.nextStream = 1
    /** The processes whose output and exit this client is sent. */
    this.subscriptions = new Set()
    /**
     * While the client is behind: for each process it subscribes, the offsets of stdout and
     * stderr it has been sent up to, and whether its exit is still to be sent.
     */
    this.behind = null
    /**
     * Frames waiting behind a reply sent in parts (`{ id, text, at, count }`), which goes out a
     * part at a time as the client reads, so that it is never all queued at once.
     */
    this.outbox = []
    this.outboxBytes = 0
    socket.on('drain', () => {
      this.flush()
      this.catchUp()
    })
  }

  queued() {
    return this.socket.writableLength + this.outboxBytes
  }

  send(message) {
    this.write(protocol.encode(message))
  }

  write(frame) {
    if (this.socket.destroyed || this.refused) return
    if (this.outbox.length > 0) {
      this.outbox.push(frame)
      this.outboxBytes += frame.length
    } else {
      this.socket.write(frame)
    }
    this.check()
  }

  check() {
    if (this.queued() > QUEUE_LIMIT) this.socket.destroy()
    else if (this.queued() > OUTPUT_BOUND) this.fallBehind()
  }

  /** A reply: one frame, or parts when its JSON is longer than PART_CHARS. Throws if it cannot be encoded. */
  reply(message) {
    const text = JSON.stringify(message)
    if (text.length <= protocol.PART_CHARS) return this.write(frameOf(text))
    if (this.socket.destroyed || this.refused) return
    this.outbox.push({ id: message.id, text, at: 0, count: 0 })
    this.outboxBytes += text.length
    this.flush()
    this.check()
  }

  /** Moves frames from the outbox to the socket while it holds less than a part. */
  flush() {
    while (this.outbox.length > 0 && this.socket.writableLength < protocol.PART_CHARS && !this.socket.destroyed) {
      const item = this.outbox[0]
      if (Buffer.isBuffer(item)) {
        this.outbox.shift()
        this.outboxBytes -= item.length
        this.socket.write(item)
      } else if (item.at < item.text.length) {
        // A cut inside a surrogate pair is escaped by JSON and whole again once joined.
        const data = item.text.slice(item.at, item.at + protocol.PART_CHARS)
        item.at += data.length
        item.count++
        this.outboxBytes -= data.length
        this.socket.write(protocol.encode({ t: 'part', id: item.id, data }))
      } else {
        this.outbox.shift()
        this.socket.write(protocol.encode({ t: 'reply', id: item.id, parts: item.count }))
      }
    }
  }

  subscribe(rec) {
    rec.subscribers.add(this)
    this.subscriptions.add(rec)
    // What the caller answers (the retained text, the result) covers everything up to now.
    if (this.behind) this.behind.set(rec, [rec.tails[0].end, rec.tails[1].end, rec.result === undefined])
  }

  unsubscribe(rec) {
    rec.subscribers.delete(this)
    this.subscriptions.delete(rec)
    // A client behind still gets what it missed of `rec`, and its exit: a process forgotten
    // meanwhile (released elsewhere) must not leave its wait() unanswered.
  }

  /** New output of `rec` on `stream` (already in its tail). */
  output(rec, stream, data) {
    if (!this.behind) this.send({ t: 'event', pid: rec.pid, kind: 'out', stream, data })
  }

  /** `rec` has exited: its exit goes after all its output, so a client behind is told once caught up. */
  exited(rec) {
    if (!this.behind) this.send({ t: 'event', pid: rec.pid, kind: 'exit', result: rec.result })
  }

  fallBehind() {
    if (this.behind) return
    this.behind = new Map()
    for (const rec of this.subscriptions) this.behind.set(rec, [rec.tails[0].end, rec.tails[1].end, rec.result === undefined])
    this.socket.pause()
  }

  /**
   * Once what was queued is read: sends a client that is behind what it missed, as much as the
   * tails still hold (the native log keeps more, for `logs()` from a cursor), then each exit,
   * and serves it live again once nothing is missing.
   */
  catchUp() {
    // Output goes after the replies in the outbox: an `attach` there comes before its events.
    if (!this.behind || this.socket.destroyed || this.outbox.length > 0) return
    for (const [rec, at] of this.behind) {
      for (const stream of [0, 1]) {
        for (;;) {
          if (this.queued() > OUTPUT_BOUND / 2) return // the next 'drain' goes on
          const piece = rec.tails[stream].since(at[stream], CATCH_UP_PIECE)
          if (!piece) break
          at[stream] = piece.next
          this.socket.write(protocol.encode({ t: 'event', pid: rec.pid, kind: 'out', stream, data: piece.text }))
        }
      }
      if (at[2] && rec.result !== undefined) {
        at[2] = false
        this.socket.write(protocol.encode({ t: 'event', pid: rec.pid, kind: 'exit', result: rec.result }))
      }
    }
    this.behind = null
    this.socket.resume()
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
 */
function serveSocket(socket, host) {
  const client = new Client(socket)
  const frames = new protocol.FrameReader()
  socket.on('data', (chunk) => {
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
        host.opened(client)
        client.send(protocol.hello({ sandbox: host.greeting() }))
        continue
      }
      const why = calls.unanswerable(m)
      if (why) {
        client.refuse(SANDBOX_PROTOCOL_MISMATCH, why)
        return
      }
      serve(host, client, m).catch(() => socket.destroy())
    }
  })
  socket.on('close', () => {
    for (const rec of client.subscriptions) rec.subscribers.delete(client)
    client.subscriptions.clear()
    if (client.greeted) host.closed(client)
    for (const st of client.streams.values()) st.reader.cancel().catch(() => {})
    client.streams.clear()
  })
  return client
}

/** Answers call `m`: its value, or the typed error of this call alone. */
async function serve(host, client, m) {
  let value
  try {
    const [op, args] = calls.resolve(host.ops, m, protocol.VERSION)
    value = await op(client, args)
  } catch (e) {
    client.reply({ t: 'reply', id: m.id, error: protocol.fromError(e) })
    return
  }
  try {
    client.reply({ t: 'reply', id: m.id, value: encodeValue(value) })
  } catch (e) {
    // Larger than a string can hold: this call fails, the connection goes on.
    const error = new errors.SandboxProtocolError(`the reply to ${m.op} cannot be sent: ${e.message}`)
    client.reply({ t: 'reply', id: m.id, error: protocol.fromError(error) })
  }
}

module.exports = { serveSocket }
