'use strict'
// The one reader of frames, on both sides: the supervisor reads its clients' frames with it
// (server/connection.js), a Node process its supervisor's (client/client.js). A frame's length is
// read and checked here only: over MAX_FRAME, of no bytes, of an unknown kind or an output frame
// too short for its stream and pid is a protocol error as soon as its head is in, before anything
// is allocated for its body, and the supervisor then disconnects that client alone.
//
// Two ways to be given bytes:
//
// - Chunks that are the reader's to keep (a socket's 'data' events; the supervisor). Frames come
//   out whole, a view into the chunk where one chunk holds the frame; the pieces of a frame that
//   spans chunks are kept as they came and joined once, when it is complete (joining them at
//   every piece made a large frame cost the square of its number of pieces).
// - `{ reused: true }`: one buffer read into again and again (`net.connect`'s `onread`; the
//   client). A Node process reads its supervisor's output without a Buffer allocated per read,
//   which cost it more than the rest of its work together (measured over a Unix socket on a
//   2-vCPU host: 570-810 MB/s with a Buffer per 64 KiB read, 1.6-2.2 GB/s reading into one
//   buffer). So output (OUT frames) is handed on as it arrives, piece by piece, views into that
//   buffer valid during `push` only: whoever keeps such a piece copies it. Of every other frame
//   the bytes that outlive the call are copied (a BLOB's or a PART's; JSON is read at once).

const errors = require('../../native/errors')
const protocol = require('./protocol')

const { KIND, MAX_FRAME } = protocol
/** Bytes of a frame's head read before its kind is known: length, kind, and an OUT frame's stream and pid. */
const HEAD = protocol.OUT_HEAD
/**
 * The largest frame read into a buffer of its own from its first piece on (a stdin write's piece
 * of 1 MiB and its call). A larger one is kept as its pieces come and joined at the end: a head
 * that announces a large frame and sends none of it costs only what was sent.
 */
const WHOLE_UP_TO = 2 * 1024 * 1024
/** The kinds of frame there are, by their first byte. */
const KNOWN = new Uint8Array(256)
for (const k of Object.values(KIND)) KNOWN[k] = 1

function protocolError(message) {
  return new errors.SandboxProtocolError(message)
}

class FrameReader {
  constructor({ reused = false } = {}) {
    /** Whether the chunks pushed are read into again after `push` (see above). */
    this.reused = reused
    /** The head of the next frame, as far as it has come. */
    this.head = Buffer.alloc(HEAD)
    this.headSize = 0
    /** Inside an OUT frame read in pieces: { pid, stream, left }. */
    this.out = null
    /** Inside another frame: its body's pieces, its length and the bytes still to come. */
    this.body = null
    this.bodySize = 0
    this.bodyLeft = 0
    /**
     * The buffer a frame read in pieces is copied into, when it is allocated whole (reused
     * chunks); `body` is then empty, and says only that a body is being read.
     */
    this.whole = null
  }

  /** The messages completed by `chunk`. Throws a protocol error for a broken frame. */
  push(chunk) {
    const messages = []
    const end = chunk.length
    let at = 0
    while (at < end) {
      if (this.out) {
        const n = Math.min(this.out.left, end - at)
        messages.push({ t: 'out', pid: this.out.pid, stream: this.out.stream, data: chunk.subarray(at, at + n) })
        at += n
        this.out.left -= n
        if (this.out.left === 0) this.out = null
        continue
      }
      if (this.body) {
        const n = Math.min(this.bodyLeft, end - at)
        if (this.whole) chunk.copy(this.whole, this.bodySize - this.bodyLeft, at, at + n)
        else this.body.push(this.keep(chunk.subarray(at, at + n)))
        at += n
        this.bodyLeft -= n
        if (this.bodyLeft === 0) {
          const body = this.whole ?? (this.body.length === 1 ? this.body[0] : Buffer.concat(this.body, this.bodySize))
          this.body = null
          this.whole = null
          messages.push(protocol.decodeBody(body))
        }
        continue
      }
      // A head: 4 bytes tell the length, checked as soon as they are in; the next, the kind; read
      // in pieces, an OUT frame's head also has its stream and pid.
      const pieces = this.reused && this.headSize >= 5 && this.head[4] === KIND.OUT
      const want = pieces ? HEAD : 5
      const n = Math.min(want - this.headSize, end - at)
      chunk.copy(this.head, this.headSize, at, at + n)
      this.headSize += n
      at += n
      if (this.headSize < 4) continue
      const len = this.head.readUInt32BE(0)
      if (!pieces) {
        if (len > MAX_FRAME) throw protocolError(`a frame of ${len} bytes is over the limit of ${MAX_FRAME}`)
        if (len === 0) throw protocolError('a frame of no bytes')
      }
      if (this.headSize < want) continue
      const kind = this.head[4]
      if (KNOWN[kind] === 0) throw protocolError(`a frame of unknown kind ${kind}`)
      if (kind === KIND.OUT) {
        if (len < 6) throw protocolError('an output frame without its stream and pid')
        if (this.reused) {
          if (!pieces) continue
          if (this.head[5] > 1) throw protocolError('an output frame without its stream and pid')
          this.headSize = 0
          if (len > 6) this.out = { pid: this.head.readUInt32BE(6), stream: this.head[5], left: len - 6 }
          continue
        }
      }
      this.headSize = 0
      // The body begins with the kind byte, the last byte of the head: at - 1 in this chunk.
      const start = at - 1
      if (end - start >= len) {
        const b = chunk.subarray(start, start + len)
        at = start + len
        const copy = this.reused && kind !== KIND.JSON && kind !== KIND.CREDIT
        messages.push(protocol.decodeBody(copy ? Buffer.from(b) : b))
        continue
      }
      this.body = []
      this.bodySize = len
      this.bodyLeft = len - (end - start)
      if (this.reused && len <= WHOLE_UP_TO) {
        // Copied into the frame's own buffer as it comes: one copy, not a copy per piece and
        // then their join (twice the garbage a large stdin write leaves for the collector).
        this.whole = Buffer.allocUnsafe(len)
        chunk.copy(this.whole, 0, start, end)
      } else this.body.push(this.keep(chunk.subarray(start)))
      at = end
    }
    return messages
  }

  /** A piece of a frame kept past this `push`: copied when the chunk is read into again. */
  keep(piece) {
    return this.reused ? Buffer.from(piece) : piece
  }
}

module.exports = { FrameReader }
