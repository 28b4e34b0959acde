'use strict'
// A terminal over a WebSocket, in the protocol xterm.js's attach addon speaks: the program's
// output as binary frames, what is typed as text or binary frames. Added: a resize message, a
// text frame of "\u0000" and then a JSON object `{ cols, rows }` (a keystroke is never a NUL and
// a `{` in one frame, so typed input is not taken for it), and, when asked (`cursors`), a text
// frame "\u0000{"cursor":…}" after each output frame so that a client can resume with `since`.
//
// Any ws-like object does (the `ws` package's, or another with the same members): `send(data)`,
// `close(code, reason)`, `on('message', (data, isBinary) => …)`, `on('close', …)`,
// `bufferedAmount` and `readyState`, and, to hold back input the program does not read,
// `pause()` and `resume()`. Nothing here requires `ws`.

const errors = require('../native/errors')

/** The first character of a control frame, in either direction. */
const CONTROL = '\u0000'
/** Output is read from the log only while the socket holds less than this unsent. */
const HIGH_WATER = 256 * 1024
/** How often a socket that holds too much is looked at again. */
const DRAIN_POLL_MS = 20
/**
 * Typed input handed to the program but not yet taken, past which the socket is read no
 * further: a program that reads nothing then holds the sender back through TCP, not this
 * process's memory.
 */
const TYPING_HIGH_WATER = 1024 * 1024
const OPEN = 1

function isWsLike(ws) {
  return ws !== null && typeof ws === 'object' && typeof ws.send === 'function' && typeof ws.on === 'function' && typeof ws.close === 'function'
}

/** A text frame's resize message `{ cols, rows }`, or null when the frame is input. */
function resizeMessage(text) {
  if (text.length < 2 || text[0] !== CONTROL || text[1] !== '{') return null
  try {
    const m = JSON.parse(text.slice(1))
    return m !== null && typeof m === 'object' && 'cols' in m && 'rows' in m ? m : null
  } catch {
    return null
  }
}

/** The bytes and whether a frame was text, whichever way the ws-like object hands it over. */
function frameOf(data, isBinary) {
  if (typeof data === 'string') return { text: data }
  const bytes = Buffer.isBuffer(data) ? data : Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data instanceof ArrayBuffer ? new Uint8Array(data) : data)
  return isBinary === false ? { text: bytes.toString('utf8') } : { bytes }
}

/**
 * Connects `target` (anything with `write` or `sendStdin`, `resize`, and `logs` or `output`
 * returning a stream of log events) to `ws`. Resolves once the connection is over: the socket
 * closed, or the program ended (the socket is then closed with 1000). A `since` cursor the log
 * does not know closes the socket with 1008 and rejects with InvalidProcessCursorError.
 */
async function connectTerminal(target, ws, options) {
  if (!isWsLike(ws)) throw errors.invalidOption('connect() takes a WebSocket: an object with send, close and on')
  const o = options === undefined || options === null ? {} : options
  if (typeof o !== 'object') throw errors.invalidOption('connect options must be an object')
  if (o.since !== undefined && typeof o.since !== 'string') throw new errors.InvalidProcessCursorError('since must be a cursor string')
  const write = typeof target.write === 'function' ? (b) => target.write(b) : (b) => target.sendStdin(b)
  const cursors = o.cursors === true
  let closed = ws.readyState !== undefined && ws.readyState !== OPEN
  let reader
  const control = (value) => {
    if (!closed && cursors) ws.send(CONTROL + JSON.stringify(value))
  }
  // Input goes in the order it came; a failed write (the program ended) drops what follows.
  let typing = Promise.resolve()
  let typed = 0
  let paused = false
  const hold = (on) => {
    if (paused === on) return
    paused = on
    const f = on ? ws.pause : ws.resume
    if (typeof f === 'function') f.call(ws)
  }
  const onMessage = (data, isBinary) => {
    const frame = frameOf(data, isBinary)
    if (frame.text !== undefined) {
      const size = resizeMessage(frame.text)
      if (size) {
        Promise.resolve()
          .then(() => target.resize(size.cols, size.rows))
          .catch((e) => control({ error: e.message }))
        return
      }
    }
    const bytes = frame.bytes ?? Buffer.from(frame.text, 'utf8')
    if (bytes.length === 0) return
    typed += bytes.length
    if (typed > TYPING_HIGH_WATER) hold(true)
    typing = typing
      .then(() => write(bytes))
      .catch(() => {})
      .then(() => {
        typed -= bytes.length
        if (typed <= TYPING_HIGH_WATER) hold(false)
      })
  }
  const onClose = () => {
    closed = true
    if (reader) reader.cancel().catch(() => {})
  }
  ws.on('message', onMessage)
  ws.on('close', onClose)
  const finish = () => {
    // Read on, so that the closing handshake is heard; what is typed now goes nowhere.
    hold(false)
    if (typeof ws.off === 'function') {
      ws.off('message', onMessage)
      ws.off('close', onClose)
    }
  }
  const read = typeof target.logs === 'function' ? (x) => target.logs(x) : (x) => target.output(x)
  let stream
  try {
    stream = await read({ since: o.since, follow: true })
  } catch (e) {
    finish()
    if (!closed) ws.close(e instanceof errors.InvalidProcessCursorError ? 1008 : 1011, String(e.message).slice(0, 120))
    throw e
  }
  reader = stream.getReader()
  if (closed) reader.cancel().catch(() => {})
  try {
    for (;;) {
      while (!closed && ws.bufferedAmount > HIGH_WATER) await new Promise((r) => setTimeout(r, DRAIN_POLL_MS))
      if (closed) break
      const { value, done } = await reader.read()
      if (done || closed) break
      if (value.type === 'stdout' || value.type === 'stderr') {
        ws.send(value.data)
        control({ cursor: value.cursor })
      } else if (value.type === 'truncated') {
        control({ truncated: true, cursor: value.cursor })
      } else if (value.type === 'terminal') {
        control({ exit: value.exit, cursor: value.cursor })
      }
    }
  } catch (e) {
    // A read that the closing socket cancelled ends here too; anything else ends the connection.
    if (!closed) ws.close(1011, String(e && e.message).slice(0, 120))
    closed = true
  } finally {
    finish()
  }
  if (!closed) {
    closed = true
    ws.close(1000, 'the program ended')
  }
}

module.exports = { connectTerminal, CONTROL, HIGH_WATER }
