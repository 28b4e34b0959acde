'use strict'
// The frames of a socket read into one buffer that is reused for every read (`net.connect`'s
// `onread`): a Node process reads its supervisor's output without a Buffer allocated per read,
// which cost it more than the rest of its work together (measured over a Unix socket on a 2-vCPU
// host: 570-810 MB/s with a Buffer per 64 KiB read, 1.6-2.2 GB/s reading into one buffer).
//
// So what `push` is given is valid during the call only. Output (OUT frames) is handed on as it
// arrives, piece by piece, views into that buffer: whoever keeps such a piece copies it. Every
// other frame is gathered (copied) until whole, then read by `protocol.decodeBody`, with the same
// checks as `protocol.FrameReader`.

const errors = require('../../native/errors')
const protocol = require('./protocol')

/** Bytes of a frame's head read before its kind is known: length, kind, and an OUT frame's stream and pid. */
const HEAD = protocol.OUT_HEAD

class ChunkReader {
  constructor() {
    /** The head of the next frame, as far as it has come. */
    this.head = Buffer.alloc(HEAD)
    this.headSize = 0
    /** Inside an OUT frame: { pid, stream, left }. */
    this.out = null
    /** Inside another frame: its body's pieces (copied) and the bytes still to come. */
    this.body = null
    this.bodyLeft = 0
  }

  /** The messages completed by `chunk` (valid until the next call). Throws a protocol error for a broken frame. */
  push(chunk) {
    const messages = []
    let at = 0
    while (at < chunk.length) {
      if (this.out) {
        const n = Math.min(this.out.left, chunk.length - at)
        messages.push({ t: 'out', pid: this.out.pid, stream: this.out.stream, data: chunk.subarray(at, at + n) })
        at += n
        this.out.left -= n
        if (this.out.left === 0) this.out = null
        continue
      }
      if (this.body) {
        const n = Math.min(this.bodyLeft, chunk.length - at)
        this.body.push(Buffer.from(chunk.subarray(at, at + n)))
        at += n
        this.bodyLeft -= n
        if (this.bodyLeft === 0) {
          const body = this.body.length === 1 ? this.body[0] : Buffer.concat(this.body)
          this.body = null
          messages.push(protocol.decodeBody(body))
        }
        continue
      }
      // A head: 5 bytes tell the length and the kind; an OUT frame's also its stream and pid.
      const want = this.headSize >= 5 && this.head[4] === protocol.KIND.OUT ? HEAD : 5
      const n = Math.min(want - this.headSize, chunk.length - at)
      chunk.copy(this.head, this.headSize, at, at + n)
      this.headSize += n
      at += n
      if (this.headSize < want) continue
      const len = this.head.readUInt32BE(0)
      if (len > protocol.MAX_FRAME) throw new errors.SandboxProtocolError(`a frame of ${len} bytes is over the limit of ${protocol.MAX_FRAME}`)
      if (len === 0) throw new errors.SandboxProtocolError('a frame of no bytes')
      const kind = this.head[4]
      if (kind === protocol.KIND.OUT) {
        if (want < HEAD) {
          if (len < 6) throw new errors.SandboxProtocolError('an output frame without its stream and pid')
          continue
        }
        if (this.head[5] > 1) throw new errors.SandboxProtocolError('an output frame without its stream and pid')
        this.headSize = 0
        if (len > 6) this.out = { pid: this.head.readUInt32BE(6), stream: this.head[5], left: len - 6 }
        continue
      }
      this.headSize = 0
      // The kind byte is the body's first: the rest of the body follows.
      this.body = [Buffer.from([kind])]
      this.bodyLeft = len - 1
      if (this.bodyLeft === 0) {
        this.body = null
        messages.push(protocol.decodeBody(Buffer.from([kind])))
      }
    }
    return messages
  }
}

module.exports = { ChunkReader }
