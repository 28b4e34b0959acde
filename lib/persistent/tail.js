'use strict'
// What the supervisor keeps of a process's stream: the last `max` bytes of its text, as the
// chunks it came in, each at its byte offset in the whole stream. A client that fell behind is
// sent the rest from the offset it had reached (`since`), as much of it as is still kept.

class Tail {
  constructor(max) {
    this.max = max
    /** [text, bytes, offset of its first byte in the stream] */
    this.chunks = []
    this.bytes = 0
    /** Bytes the stream has had in all: the offset of the next chunk. */
    this.end = 0
  }

  append(text) {
    const n = Buffer.byteLength(text)
    this.chunks.push([text, n, this.end])
    this.bytes += n
    this.end += n
    while (this.chunks.length > 1 && this.bytes - this.chunks[0][1] >= this.max) this.bytes -= this.chunks.shift()[1]
  }

  toString() {
    const all = this.chunks.map((c) => c[0]).join('')
    if (this.bytes <= this.max) return all
    const buf = Buffer.from(all)
    let start = buf.length - this.max
    while (start < buf.length && (buf[start] & 0xc0) === 0x80) start++ // not inside a character
    return buf.subarray(start).toString()
  }

  /**
   * Whole chunks from offset `from` (a chunk's offset or the end; older than what is kept means
   * the oldest kept), about `limit` bytes of them: `{ text, next }`, or null at the end.
   */
  since(from, limit) {
    if (from >= this.end || this.chunks.length === 0) return null
    let lo = 0
    let hi = this.chunks.length - 1
    while (lo < hi) {
      const mid = (lo + hi) >> 1
      if (this.chunks[mid][2] < from) lo = mid + 1
      else hi = mid
    }
    const parts = []
    let size = 0
    let i = lo
    while (i < this.chunks.length && (parts.length === 0 || size + this.chunks[i][1] <= limit)) {
      parts.push(this.chunks[i][0])
      size += this.chunks[i][1]
      i++
    }
    return { text: parts.join(''), next: i < this.chunks.length ? this.chunks[i][2] : this.end }
  }
}

module.exports = { Tail }
