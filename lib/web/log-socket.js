'use strict'
// A process page's WebSocket: the process's log as it is written, one JSON text frame per event
// (`{ type: 'stdout' | 'stderr', data: <base64>, cursor }`, `{ type: 'truncated', cursor }`,
// `{ type: 'restart', attempt, exit, cursor }`, `{ type: 'probe', probe, ok, reason, cursor }`,
// `{ type: 'exit', exit, cursor }`, `{ type: 'error', message }`). The page keeps the last cursor
// it was sent and, after a dropped connection, opens a new one with `?since=` that cursor: the
// log goes on from the next byte, with no gap and no repeat. The bytes go as base64 because a
// chunk may end inside a UTF-8 character; the page decodes them as one stream. With `until` a
// cursor, the socket sends what was kept up to and including that cursor and closes: how a page
// opened after a cursor loads what came before it.

const errors = require('../native/errors')
const { HIGH_WATER } = require('../faces/connect')

const DRAIN_POLL_MS = 20

/** Resolves once the socket holds less than HIGH_WATER unsent, or is closed. */
async function drained(ws) {
  while (ws.readyState === 1 && ws.bufferedAmount > HIGH_WATER) await new Promise((r) => setTimeout(r, DRAIN_POLL_MS))
}

/**
 * Sends `target.logs({ since, follow: true })` to `ws` until the process ends or the socket
 * closes (or, with `until`, the kept log up to that cursor). A slow browser pauses the reading (the log waits in its own bounded buffer), so what
 * this server holds for one socket stays near HIGH_WATER.
 */
async function serveLog(target, ws, { since, until }) {
  let reader
  let closed = false
  ws.on('close', () => {
    closed = true
    if (reader) reader.cancel().catch(() => {})
  })
  const send = (value) => {
    if (!closed) ws.send(JSON.stringify(value))
  }
  try {
    reader = (await target.logs(until ? {} : { since, follow: true })).getReader()
  } catch (e) {
    send({ type: 'error', message: e.message })
    ws.close(e instanceof errors.InvalidProcessCursorError ? 1008 : 1011)
    return
  }
  if (closed) return void reader.cancel().catch(() => {})
  try {
    for (;;) {
      await drained(ws)
      if (closed) return
      const { value, done } = await reader.read()
      if (done || closed) break
      if (value.type === 'stdout' || value.type === 'stderr') send({ type: value.type, data: Buffer.from(value.data).toString('base64'), cursor: value.cursor })
      else if (value.type === 'truncated') send({ type: 'truncated', cursor: value.cursor })
      else if (value.type === 'restart') send({ type: 'restart', attempt: value.attempt, exit: value.exit, cursor: value.cursor })
      else if (value.type === 'probe') send({ type: 'probe', probe: value.probe, ok: value.ok, reason: value.reason, cursor: value.cursor })
      else if (value.type === 'terminal') send({ type: 'exit', exit: value.exit, cursor: value.cursor })
      if (until && value.cursor === until) break
    }
  } catch (e) {
    if (!closed) {
      send({ type: 'error', message: e.message })
      ws.close(1011)
    }
    return
  }
  if (!closed) ws.close(1000)
}

module.exports = { serveLog }
