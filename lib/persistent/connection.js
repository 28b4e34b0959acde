'use strict'
// One client of a persistent sandbox's supervisor: its frames read and checked, its calls served,
// its replies and the processes' output written to it. Whatever a client sends, the worst that
// happens is that this client is disconnected; the supervisor, its processes and its other
// clients go on.

const protocol = require('./protocol')
const calls = require('./calls')
const { encodeValue } = require('./values')

/** How long a client told why it is disconnected has to read that before its socket is closed. */
const REFUSAL_GRACE_MS = 1000

class Client {
  constructor(socket) {
    this.socket = socket
    this.greeted = false
    this.refused = false
    /** Open `logs()` streams of this client, by id. */
    this.streams = new Map()
    this.nextStream = 1
  }

  send(message) {
    if (!this.socket.destroyed && !this.refused) this.socket.write(protocol.encode(message))
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
      client.refuse(e.code || 'SANDBOX_PROTOCOL_MISMATCH', e.message)
      return
    }
    for (const m of messages) {
      if (client.refused || socket.destroyed) return
      if (!client.greeted) {
        const why = protocol.helloMismatch(m, 'the client')
        if (why) {
          client.refuse('SANDBOX_PROTOCOL_MISMATCH', why, { protocol: protocol.PROTOCOL, version: protocol.VERSION })
          return
        }
        client.greeted = true
        host.opened(client)
        client.send(protocol.hello({ sandbox: host.greeting() }))
        continue
      }
      const why = calls.unanswerable(m)
      if (why) {
        client.refuse('SANDBOX_PROTOCOL_MISMATCH', why)
        return
      }
      serve(host, client, m).catch(() => socket.destroy())
    }
  })
  socket.on('close', () => {
    if (client.greeted) host.closed(client)
    for (const st of client.streams.values()) st.reader.cancel().catch(() => {})
    client.streams.clear()
  })
  return client
}

/** Answers call `m`: its value, or the typed error of this call alone. */
async function serve(host, client, m) {
  try {
    const [op, args] = calls.resolve(host.ops, m, protocol.VERSION)
    const value = await op(client, args)
    client.send({ t: 'reply', id: m.id, value: encodeValue(value) })
  } catch (e) {
    client.send({ t: 'reply', id: m.id, error: protocol.fromError(e) })
  }
}

module.exports = { serveSocket }
