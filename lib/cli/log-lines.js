'use strict'
// What `procvisor logs` prints of a log besides the output bytes: a line for each restart and
// probe verdict (on stderr, so that stdout stays the program's bytes), and with --timestamps the
// time of the event each line of output began in.

const { binding } = require('../native/native')

/** How a run ended, as a person reads it. */
function ended(exit) {
  if (exit.signal !== undefined && exit.signal !== null) {
    const name = binding.signalName(exit.signal)
    return `ended by signal ${exit.signal}${name ? ` (${name})` : ''}`
  }
  return `exited with code ${exit.code}`
}

/** The line of a restart or probe event (without its newline), or null for any other. */
function eventText(e) {
  if (e.type === 'restart') return `--- restart ${e.attempt} (${ended(e.exit)}) ---`
  if (e.type === 'probe') return `--- ${e.probe} ${e.ok ? 'passed' : 'failed'}${e.reason ? `: ${e.reason}` : ''} ---`
  return null
}

/**
 * Puts `<timestamp> ` before each line of one process's output: a line gets the time of the
 * event it began in, however many events it spans. One per process, for both its streams.
 */
class Stamper {
  constructor() {
    this.atStart = { stdout: true, stderr: true }
  }

  /** The bytes of output event `e` with its lines stamped. */
  stamp(e) {
    const data = Buffer.from(e.data.buffer, e.data.byteOffset, e.data.byteLength)
    const prefix = Buffer.from(`${e.timestamp} `)
    const parts = []
    let from = 0
    while (from < data.length) {
      if (this.atStart[e.type]) parts.push(prefix)
      const nl = data.indexOf(10, from)
      const to = nl < 0 ? data.length : nl + 1
      parts.push(data.subarray(from, to))
      this.atStart[e.type] = nl >= 0
      from = to
    }
    return Buffer.concat(parts)
  }
}

module.exports = { eventText, Stamper }
