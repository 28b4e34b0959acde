'use strict'
// The values that cross the supervisor's socket inside JSON: RegExps and Dates (`waitForLog`
// patterns, timestamps) are tagged so that they arrive as what they were, and bytes (stdin, log
// data) go beside the JSON as they are, named in it by `$bin` (see protocol.js). Functions and
// AbortSignals do not cross: a remote wait is aborted on the client's side.

const errors = require('../../native/errors')
const { LogMatcher, linearPattern } = require('../../process/pattern')

/** A holder of the bytes a message carries beside its JSON, in order. */
function attachments() {
  const list = []
  list.size = 0
  return list
}

/** `v` as JSON can carry it; its bytes go to `att` (from `attachments()`). */
function encodeValue(v, att) {
  if (v === undefined || v === null || typeof v !== 'object') return v
  if (v instanceof Uint8Array) {
    const b = Buffer.isBuffer(v) ? v : Buffer.from(v.buffer, v.byteOffset, v.byteLength)
    att.push(b)
    att.size += b.length
    return { $bin: [att.size - b.length, b.length] }
  }
  if (v instanceof RegExp) return { $re: [v.source, v.flags] }
  // A pattern checked already (an agent's tool call's): it crosses as what it was made from,
  // and is checked again on the other side.
  if (v instanceof LogMatcher) return encodeValue(v.pattern, att)
  if (v instanceof Date) return { $date: v.getTime() }
  if (typeof AbortSignal !== 'undefined' && v instanceof AbortSignal) return undefined
  if (Array.isArray(v)) return v.map((x) => encodeValue(x, att))
  const out = {}
  for (const [k, x] of Object.entries(v)) {
    if (typeof x === 'function') continue
    const e = encodeValue(x, att)
    if (e !== undefined) out[k] = e
  }
  return out
}

/** Deeper values are a broken or hostile client's, not procvisor's: refused before the stack runs out. */
const MAX_DEPTH = 64

function decodeValue(v, depth = 0) {
  if (v === undefined || v === null || typeof v !== 'object') return v
  if (depth > MAX_DEPTH) throw new errors.SandboxProtocolError(`a value nested more than ${MAX_DEPTH} levels deep`)
  // Bytes were put in place as the frame was read, from the frame's own bytes.
  if (Buffer.isBuffer(v)) return v
  if (Array.isArray(v)) return v.map((x) => decodeValue(x, depth + 1))
  if (Array.isArray(v.$re)) {
    const [source, flags] = v.$re
    try {
      new RegExp(source, flags) // eslint-disable-line no-new
    } catch (e) {
      throw new errors.SandboxProtocolError(`a pattern that is not a RegExp: ${e.message}`)
    }
    // Matched in linear time, or refused: a client's pattern must not hold the supervisor, and
    // with it every other client.
    return linearPattern(source, flags)
  }
  if (typeof v.$date === 'number') return new Date(v.$date)
  const out = {}
  for (const [k, x] of Object.entries(v)) {
    // An own "__proto__" from JSON would set the object's prototype on assignment.
    if (k !== '__proto__') out[k] = decodeValue(x, depth + 1)
  }
  return out
}

module.exports = { attachments, encodeValue, decodeValue }
