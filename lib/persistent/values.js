'use strict'
// The values that cross the supervisor's socket inside JSON: Buffers, RegExps and Dates (log
// data, `waitForLog` patterns, timestamps) are tagged so that they arrive as what they were.
// Functions and AbortSignals do not cross: a remote wait is aborted on the client's side.

function encodeValue(v) {
  if (v === undefined || v === null || typeof v !== 'object') return v
  if (Buffer.isBuffer(v) || v instanceof Uint8Array) return { $buf: Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString('base64') }
  if (v instanceof RegExp) return { $re: [v.source, v.flags] }
  if (v instanceof Date) return { $date: v.getTime() }
  if (typeof AbortSignal !== 'undefined' && v instanceof AbortSignal) return undefined
  if (Array.isArray(v)) return v.map(encodeValue)
  const out = {}
  for (const [k, x] of Object.entries(v)) {
    if (typeof x === 'function') continue
    const e = encodeValue(x)
    if (e !== undefined) out[k] = e
  }
  return out
}

function decodeValue(v) {
  if (v === undefined || v === null || typeof v !== 'object') return v
  if (Array.isArray(v)) return v.map(decodeValue)
  if (typeof v.$buf === 'string') return Buffer.from(v.$buf, 'base64')
  if (Array.isArray(v.$re)) return new RegExp(v.$re[0], v.$re[1])
  if (typeof v.$date === 'number') return new Date(v.$date)
  const out = {}
  for (const [k, x] of Object.entries(v)) out[k] = decodeValue(x)
  return out
}

module.exports = { encodeValue, decodeValue }
