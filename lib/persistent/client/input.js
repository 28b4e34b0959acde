'use strict'
// The input (stdin, a terminal's keys) a Node process sends its supervisor, bounded twice.
//
// Per process, by the rule of every process's input (lib/process/stdin-queue.js, which a
// process's port here uses as a local process's core does).
//
// Per connection: past INPUT_WINDOW bytes not yet written to their processes, the supervisor
// stops reading the connection until the writes are done (server/connection.js), and writes to
// processes that never read their input would stop everything else on it, the kill that would
// end them included. So the writes past it wait here, and only they wait.

const protocol = require('../wire/protocol')

class InputGate {
  constructor() {
    /** Bytes of input in calls sent and not yet answered. */
    this.sent = 0
    /** Calls waiting for room, in call order: { size, go }. */
    this.waiting = []
  }

  /** Runs `send` (a call carrying `size` bytes of input) once the supervisor has room for it. */
  async run(size, send) {
    if (this.waiting.length > 0 || !this.fits(size)) await new Promise((go) => this.waiting.push({ size, go }))
    else this.sent += size
    try {
      return await send()
    } finally {
      this.sent -= size
      this.next()
    }
  }

  /** A call larger than the window goes alone: it is never refused room. */
  fits(size) {
    return this.sent === 0 || this.sent + size <= protocol.INPUT_WINDOW
  }

  next() {
    while (this.waiting.length > 0 && this.fits(this.waiting[0].size)) {
      const { size, go } = this.waiting.shift()
      this.sent += size
      go()
    }
  }
}

module.exports = { InputGate }
