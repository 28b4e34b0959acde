'use strict'
// The values that cross the supervisor's socket inside JSON: Buffers, RegExps and Dates (log
// data, `waitForLog` patterns, timestamps) are tagged so that they arrive as what they were.
// Functions and AbortSignals do not cross: a remote wait is aborted on the client's side.

const errors = require('../errors')

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

/** Deeper values are a broken or hostile client's, not procvisor's: refused before the stack runs out. */
const MAX_DEPTH = 64

function decodeValue(v, depth = 0) {
  if (v === undefined || v === null || typeof v !== 'object') return v
  if (depth > MAX_DEPTH) throw new errors.SandboxProtocolError(`a value nested more than ${MAX_DEPTH} levels deep`)
  if (Array.isArray(v)) return v.map((x) => decodeValue(x, depth + 1))
  if (typeof v.$buf === 'string') return Buffer.from(v.$buf, 'base64')
  if (Array.isArray(v.$re)) {
    try {
      return new RegExp(v.$re[0], v.$re[1])
    } catch (e) {
      throw new errors.SandboxProtocolError(`a pattern that is not a RegExp: ${e.message}`)
    }
  }
  if (typeof v.$date === 'number') return new Date(v.$date)
  const out = {}
  for (const [k, x] of Object.entries(v)) {
    // An own "__proto__" from JSON would set the object's prototype on assignment.
    if (k !== '__proto__') out[k] = decodeValue(x, depth + 1)
  }
  return out
}

module.exports = { encodeValue, decodeValue }
