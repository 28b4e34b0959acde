'use strict'
// wire/: what both sides (server/ and client/) share to speak the wire; requires nothing else of lib/persistent.
//
// The wire between a persistent sandbox's supervisor and the Node processes attached to it.
//
// A frame is a 4-byte big-endian length and that many bytes of body; the body's first byte says
// what it holds:
//
// - `{` (0x7b): the whole body is a JSON object (hellos, calls, replies, exits). A frame of the
//   protocols before 3 is one of these, so the hello of any version can be read by any other.
// - OUT (0x01): output of a process: stream (u8: 0 stdout, 1 stderr), pid (u32), then the bytes
//   as the process wrote them: no JSON and no base64 around output.
// - CREDIT (0x02): a client lets the supervisor send `n` (u32) more bytes of output (stream 0)
//   or of one of its log streams (its id): the bytes it read of them, so that what it is owed
//   never passes WINDOW. Credit past that is a protocol error, and ends the connection.
// - BLOB (0x03): a JSON object (its length a u32) followed by the bytes of the Buffers it holds,
//   each written in the JSON as `{ "$bin": [offset, length] }` into those bytes (stdin data,
//   log events).
// - PART (0x04): a piece (call id u32, then bytes) of the body of a reply too large for one frame.
//
// The first frame each way is a JSON hello that names the protocol and the package version; a
// side that speaks another protocol is refused with a typed error before any other frame is
// read, so two versions never misread each other. Every length is checked against the frame it
// is in before anything is allocated; both sides read frames out of the byte stream with one
// reader (reader.js), which reads a body here (`decodeBody`). The supervisor's socket lives in a
// directory only its user can enter, and the supervisor also checks each client's uid with the
// kernel (SO_PEERCRED).

const errors = require('../../native/errors')

/**
 * Bumped whenever a frame's meaning changes (2: replies in parts; 3: binary frames, credit; 4:
 * rings that hold the whole log, and `logs()` streams read from them).
 */
const PROTOCOL = 4
const VERSION = require('../../../package.json').version
/** A frame larger than this is a protocol error, not a reason to allocate without bound. */
const MAX_FRAME = 64 * 1024 * 1024
/** A reply whose body is larger than this crosses as PART frames of this size, then a JSON reply that counts them. */
const PART_BYTES = 1024 * 1024
/**
 * Bytes of output the supervisor may send a client beyond what the client has said it read:
 * what it starts with, and what it gives back as it reads. Also the first credit of a log stream.
 */
const WINDOW = 8 * 1024 * 1024
/**
 * Bytes of input (stdin, a terminal's keys) a client may have in calls the supervisor has not yet
 * answered. A write is answered once its process read it, so a process that never reads holds
 * what it was sent: past this bound the supervisor reads no more of that client's calls until
 * those writes are done, and procvisor's client holds its next writes back itself (client/input.js),
 * so that its other calls never wait behind them.
 */
const INPUT_WINDOW = 4 * 1024 * 1024

const KIND = Object.freeze({ JSON: 0x7b, OUT: 0x01, CREDIT: 0x02, BLOB: 0x03, PART: 0x04 })
/** Length, kind, stream and pid before the bytes of an OUT frame. */
const OUT_HEAD = 10

function protocolError(message) {
  return new errors.SandboxProtocolError(message)
}

/** The frame of a JSON message. */
function encode(message) {
  const text = JSON.stringify(message)
  const size = Buffer.byteLength(text)
  const frame = Buffer.allocUnsafe(4 + size)
  frame.writeUInt32BE(size, 0)
  frame.write(text, 4)
  return frame
}

/**
 * The body of `message` whose Buffers were replaced by `$bin` references into `attachments` (see
 * values.js), as the pieces to write in order: one JSON body, or a BLOB's head and its bytes.
 */
function body(message, attachments) {
  const text = JSON.stringify(message)
  if (attachments.length === 0) return [Buffer.from(text)]
  const size = Buffer.byteLength(text)
  const head = Buffer.allocUnsafe(5 + size)
  head[0] = KIND.BLOB
  head.writeUInt32BE(size, 1)
  head.write(text, 5)
  return [head, ...attachments]
}

/** The 4-byte length that goes before a body of `size` bytes. */
function lengthOf(size) {
  const head = Buffer.allocUnsafe(4)
  head.writeUInt32BE(size, 0)
  return head
}

/**
 * The frame of a call as the pieces to write, or a typed error for a call too large for one frame
 * (nothing is sent). A `quiet` call gets no reply.
 */
function encodeCall(id, op, args, attachments, quiet) {
  const pieces = body(quiet ? { t: 'call', id, op, args, quiet } : { t: 'call', id, op, args }, attachments)
  const size = pieces.reduce((n, p) => n + p.length, 0)
  if (size > MAX_FRAME) {
    throw protocolError(`the call ${op} is ${size} bytes, over the ${MAX_FRAME}-byte limit of one frame; nothing was sent`)
  }
  return [lengthOf(size), ...pieces]
}

/** The head of an OUT frame of `n` bytes of `stream` (0 or 1) of process `pid`. */
function outHead(pid, stream, n) {
  const head = Buffer.allocUnsafe(OUT_HEAD)
  head.writeUInt32BE(n + 6, 0)
  head[4] = KIND.OUT
  head[5] = stream
  head.writeUInt32BE(pid, 6)
  return head
}

/** A CREDIT frame: `n` more bytes for `stream` (0: the processes' output; else a log stream's id). */
function credit(stream, n) {
  const frame = Buffer.allocUnsafe(13)
  frame.writeUInt32BE(9, 0)
  frame[4] = KIND.CREDIT
  frame.writeUInt32BE(stream, 5)
  frame.writeUInt32BE(n, 9)
  return frame
}

/** A PART frame: `data`, the next piece of the body of the reply to call `id`. */
function part(id, data) {
  const head = Buffer.allocUnsafe(9)
  head.writeUInt32BE(5 + data.length, 0)
  head[4] = KIND.PART
  head.writeUInt32BE(id, 5)
  return [head, data]
}

/** Reads a JSON object out of `text`; `payload` resolves its `$bin` references (BLOB frames). */
function parseJson(text, payload) {
  let message
  try {
    message = payload === undefined ? JSON.parse(text) : JSON.parse(text, (k, v) => (v !== null && typeof v === 'object' && Object.hasOwn(v, '$bin') ? bytesOf(v.$bin, payload) : v))
  } catch (e) {
    if (e instanceof errors.SandboxProtocolError) throw e
    throw protocolError(`a frame is not JSON: ${e.message}`)
  }
  if (message === null || typeof message !== 'object' || Array.isArray(message)) throw protocolError('a frame must hold a JSON object')
  return message
}

function bytesOf(ref, payload) {
  if (!Array.isArray(ref) || ref.length !== 2 || !ref.every((n) => Number.isSafeInteger(n) && n >= 0) || ref[0] + ref[1] > payload.length) {
    throw protocolError(`a reference to bytes outside the ${payload.length} bytes of its frame`)
  }
  return payload.subarray(ref[0], ref[0] + ref[1])
}

/** The message of one frame's body; throws a protocol error for a body that is not one. */
function decodeBody(b) {
  if (b.length === 0) throw protocolError('a frame of no bytes')
  switch (b[0]) {
    case KIND.JSON:
      return parseJson(b.toString('utf8'))
    case KIND.OUT:
      if (b.length < 6 || b[1] > 1) throw protocolError('an output frame without its stream and pid')
      return { t: 'out', stream: b[1], pid: b.readUInt32BE(2), data: b.subarray(6) }
    case KIND.CREDIT:
      if (b.length !== 9) throw protocolError(`a credit frame of ${b.length} bytes, not 9`)
      return { t: 'credit', stream: b.readUInt32BE(1), n: b.readUInt32BE(5) }
    case KIND.BLOB: {
      const size = b.length >= 5 ? b.readUInt32BE(1) : -1
      if (size < 0 || size > b.length - 5) throw protocolError('a frame whose JSON is longer than the frame')
      return parseJson(b.toString('utf8', 5, 5 + size), b.subarray(5 + size))
    }
    case KIND.PART:
      if (b.length < 5) throw protocolError('a part frame without its call id')
      return { t: 'part', id: b.readUInt32BE(1), data: b.subarray(5) }
    default:
      throw protocolError(`a frame of unknown kind ${b[0]}`)
  }
}

/** The reply that `parts` (the bytes of its part frames, in order) spell. */
function joinParts(parts, id) {
  let m
  try {
    m = decodeBody(Buffer.concat(parts))
  } catch (e) {
    return { t: 'reply', id, error: fromError(protocolError(`the reply to call ${id}, sent in ${parts.length} parts, cannot be read: ${e.message}`)) }
  }
  if (m.t === 'reply' && m.id === id && m.parts === undefined) return m
  return { t: 'reply', id, error: fromError(protocolError(`the parts of the reply to call ${id} are not that reply`)) }
}

const batched = Symbol('writes batched')

/**
 * Holds what is written to `socket` until the end of this turn of the event loop, then writes it
 * in one system call: on a host where waking the other side costs most of a small message
 * (measured: 170 µs per write of the supervisor, a Unix socket between two vCPUs), a quiet call
 * goes with the next call that wants an answer (a release with the next spawn, say).
 */
function batch(socket) {
  if (socket[batched]) return
  socket[batched] = true
  socket.cork()
  setImmediate(() => flush(socket))
}

/** Writes what `batch` holds now. */
function flush(socket) {
  if (!socket[batched]) return
  socket[batched] = false
  socket.uncork()
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

module.exports = {
  PROTOCOL,
  VERSION,
  MAX_FRAME,
  PART_BYTES,
  WINDOW,
  INPUT_WINDOW,
  KIND,
  OUT_HEAD,
  encode,
  body,
  lengthOf,
  encodeCall,
  outHead,
  credit,
  part,
  decodeBody,
  joinParts,
  batch,
  flush,
  hello,
  helloMismatch,
  socketDirectory,
  socketPath,
  fromError,
  toError,
}
