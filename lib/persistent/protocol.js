'use strict'
// The wire between a persistent sandbox's supervisor and the Node processes attached to it.
//
// A frame is a 4-byte big-endian length and that many bytes of UTF-8 JSON. The first frame each
// way is a hello that names the protocol and the package version; a side that speaks another
// protocol is refused with a typed error before any other frame is read, so two versions never
// misread each other. The supervisor's socket lives in a directory only its user can enter, and
// the supervisor also checks each client's uid with the kernel (SO_PEERCRED).

const errors = require('../errors')

/** Bumped whenever a frame's meaning changes (2: replies in parts). */
const PROTOCOL = 2
const VERSION = require('../../package.json').version
/** A frame larger than this is a protocol error, not a reason to allocate without bound. */
const MAX_FRAME = 64 * 1024 * 1024
/**
 * A reply whose JSON is longer than this many characters is sent as `part` frames of this size,
 * then a reply frame that counts them: a reply of any size (retained text, say) crosses, and
 * the frames between its parts keep their place.
 */
const PART_CHARS = 1024 * 1024

function encode(message) {
  const body = Buffer.from(JSON.stringify(message), 'utf8')
  const head = Buffer.allocUnsafe(4)
  head.writeUInt32BE(body.length, 0)
  return Buffer.concat([head, body])
}

/** The frame of a call, or a typed error for a call too large for one frame (nothing is sent). */
function encodeCall(id, op, args) {
  const frame = encode({ t: 'call', id, op, args })
  if (frame.length - 4 > MAX_FRAME) {
    throw new errors.SandboxProtocolError(`the call ${op} is ${frame.length - 4} bytes, over the ${MAX_FRAME}-byte limit of one frame; nothing was sent`)
  }
  return frame
}

/** The reply that `parts` (the `data` of its part frames, in order) spell. */
function joinParts(parts, id) {
  try {
    const m = JSON.parse(parts.join(''))
    if (m && m.t === 'reply' && m.id === id && m.parts === undefined) return m
  } catch (e) {
    return { t: 'reply', id, error: fromError(new errors.SandboxProtocolError(`the reply to call ${id}, sent in ${parts.length} parts, cannot be read: ${e.message}`)) }
  }
  return { t: 'reply', id, error: fromError(new errors.SandboxProtocolError(`the parts of the reply to call ${id} are not that reply`)) }
}

/**
 * Reassembles frames from a byte stream. `push` returns the messages completed by `chunk`. The
 * pieces of a frame are kept as they came and joined once, when the frame is complete: joining
 * them at every piece made a large frame cost the square of its number of pieces.
 */
class FrameReader {
  constructor() {
    this.chunks = []
    this.size = 0
    /** The body length of the frame being read, once its 4-byte head is in. */
    this.need = -1
  }

  push(chunk) {
    if (chunk.length > 0) {
      this.chunks.push(chunk)
      this.size += chunk.length
    }
    const out = []
    for (;;) {
      if (this.need < 0) {
        if (this.size < 4) break
        const len = this.take(4).readUInt32BE(0)
        if (len > MAX_FRAME) throw new errors.SandboxProtocolError(`a frame of ${len} bytes is over the limit of ${MAX_FRAME}`)
        this.need = len
      }
      if (this.size < this.need) break
      const body = this.take(this.need)
      this.need = -1
      let message
      try {
        message = JSON.parse(body.toString('utf8'))
      } catch (e) {
        throw new errors.SandboxProtocolError(`a frame is not JSON: ${e.message}`)
      }
      out.push(message)
    }
    return out
  }

  /** The next `n` bytes (all buffered): a view when one piece holds them, else one copy. */
  take(n) {
    const first = this.chunks[0]
    let out
    if (first.length >= n) {
      out = first.subarray(0, n)
      if (first.length === n) this.chunks.shift()
      else this.chunks[0] = first.subarray(n)
    } else {
      const parts = []
      let got = 0
      while (got < n) {
        const c = this.chunks[0]
        if (got + c.length <= n) {
          parts.push(this.chunks.shift())
          got += c.length
        } else {
          parts.push(c.subarray(0, n - got))
          this.chunks[0] = c.subarray(n - got)
          got = n
        }
      }
      out = Buffer.concat(parts, n)
    }
    this.size -= n
    return out
  }
}

function hello(extra) {
  return { t: 'hello', protocol: PROTOCOL, version: VERSION, ...extra }
}

/** Why a hello from the other side cannot be accepted, or null. */
function helloMismatch(message, from) {
  if (!message || message.t !== 'hello') return `${from} did not begin with a hello frame`
  if (message.protocol !== PROTOCOL) {
    return `${from} speaks protocol ${message.protocol} (procvisor ${message.version}); this one speaks protocol ${PROTOCOL} (procvisor ${VERSION})`
  }
  return null
}

// The socket's place is worked out in location.js; re-exported for callers that look for it here.
const { socketDirectory, socketPath } = require('./location')

/** The properties of procvisor's errors that say more than the message (all JSON values). */
const DETAILS = ['osCode', 'errno', 'path', 'syscall', 'pid', 'exitCode', 'signal', 'stderrTail']

/** A plain, JSON-safe description of an error, rebuilt on the other side by `toError`. */
function fromError(e) {
  if (!(e instanceof Error)) return { name: 'Error', message: String(e) }
  const out = { name: e.name, message: e.message }
  for (const k of ['code', ...DETAILS]) if (e[k] !== undefined) out[k] = e[k]
  return out
}

/** The typed error that `fromError` described: the same class where it is one of procvisor's. */
function toError(d) {
  const C = (d.code && errors.byCode(d.code)) || (d.name === 'RangeError' ? RangeError : d.name === 'TypeError' ? TypeError : Error)
  const e = new C(d.message)
  for (const k of DETAILS) if (d[k] !== undefined) e[k] = d[k]
  if (C === Error && d.code !== undefined) e.code = d.code
  return e
}

module.exports = { PROTOCOL, VERSION, MAX_FRAME, PART_CHARS, encode, encodeCall, joinParts, FrameReader, hello, helloMismatch, socketDirectory, socketPath, fromError, toError }
