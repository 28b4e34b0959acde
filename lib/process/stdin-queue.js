'use strict'
// The one rule of a process's input, wherever the process runs: writes and the EOF reach it in
// call order, each write is a copy of the data as it was at the call, and what waits is bounded.
// A backend gives the transport (`send(bytes)`, `close()`): the native pipe here, the
// supervisor's socket for a persistent sandbox's process.

const errors = require('../native/errors')
const { checkStdinData } = require('./mastra-rules')

/**
 * Bytes of stdin that may wait for a process, written but not yet taken by its pipe. Past it a
 * write is refused with a typed error, nothing of it sent: a program that never reads its stdin
 * must not make Node (or a persistent sandbox's supervisor) grow without bound. A single write
 * larger than this is taken when nothing waits before it.
 */
const STDIN_BACKLOG = 16 * 1024 * 1024

/**
 * Buffers whose bytes nobody writes again (`handOver`): a write keeps them as they are rather
 * than copy them. The supervisor hands over each stdin write it read from a client, a buffer of
 * its own, which a copy would only double in memory until V8 collects it.
 */
const handedOver = new WeakSet()

/** Marks `buf` as one whose bytes nobody writes again: a write of it takes it without a copy. */
function handOver(buf) {
  handedOver.add(buf)
  return buf
}

class StdinQueue {
  /** `send(buf)` and `close()` each return a promise; `name` names the process in errors. */
  constructor(send, close, name) {
    this._send = send
    this._close = close
    this._name = name
    /** The last operation queued; undefined before the first. */
    this._tail = undefined
    /** Bytes of the writes queued and not yet settled. */
    this.queued = 0
  }

  /**
   * Runs operations one after another, in call order. Each transport call is a task of its own
   * (a native task, a socket call), so calls made without awaiting (`write(a); write(b);
   * close()`) could otherwise reach the process in any order, and the EOF overtake the writes.
   */
  _inOrder(op) {
    const run = this._tail ? this._tail.then(op) : Promise.resolve().then(op)
    this._tail = run.then(
      () => {},
      () => {},
    )
    return run
  }

  /** Writes `data` (a string as UTF-8, or bytes) after every operation queued before it. */
  write(data) {
    checkStdinData(data)
    const size = typeof data === 'string' ? Buffer.byteLength(data, 'utf8') : data.byteLength
    // Refused before the copy: a refused write costs nothing.
    if (this.queued > 0 && this.queued + size > STDIN_BACKLOG) {
      return Promise.reject(
        new errors.ProcessStdinBacklogError(
          `stdin of process ${this._name()} is full: ${this.queued} bytes written before are still unread (at most ` +
            `${STDIN_BACKLOG} may wait); nothing of this write was sent, await earlier writes before sending more`,
        ),
      )
    }
    // A copy: the caller may reuse its buffer as soon as this returns.
    const buf = typeof data === 'string' ? Buffer.from(data, 'utf8') : handedOver.has(data) ? data : Buffer.from(data)
    this.queued += buf.length
    const settle = () => {
      this.queued -= buf.length
    }
    const run = this._inOrder(() => this._send(buf))
    run.then(settle, settle)
    return run
  }

  /** EOF, after every write queued before it. */
  close() {
    return this._inOrder(() => this._close())
  }
}

module.exports = { STDIN_BACKLOG, StdinQueue, handOver }
