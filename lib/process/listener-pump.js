'use strict'
// The listener pump's scheduling: `onStdout` / `onStderr` listeners get their output from the
// JS thread's check phase, a bounded share of each turn for all processes together (see
// `ProcessCore.drain` in core.js).

const errors = require('../native/errors')
const { describe } = require('../native/util')

/**
 * Listener pumps are drained from setImmediate, never inside the threadsafe-function callback:
 * Node runs up to 1,000 queued callbacks per wake-up, so draining there let a fast producer hold
 * the event loop for seconds. Here every core with new output is drained in turn, within a
 * budget per turn; the rest waits for the next turn (the native side holds the producer back).
 */
const DRAIN_BUDGET_MS = 4
const dirty = new Set()
let drainScheduled = false

function scheduleDrain(core) {
  dirty.add(core)
  if (!drainScheduled) {
    drainScheduled = true
    setImmediate(drainDirty)
  }
}

function drainDirty() {
  drainScheduled = false
  const end = performance.now() + DRAIN_BUDGET_MS
  for (const c of dirty) {
    dirty.delete(c)
    c.drain()
    if (performance.now() > end) break
  }
  if (dirty.size > 0 && !drainScheduled) {
    drainScheduled = true
    setImmediate(drainDirty)
  }
}

const NO_LISTENERS = Object.freeze([])

/** Checks `onStdout` / `onStderr` of `o` (functions or absent) and returns them as [stream, fn]. */
function listenersOf(o) {
  // Most calls give neither listener: one shared empty answer, nothing allocated.
  if (o === undefined || o === null || (o.onStdout === undefined && o.onStderr === undefined)) return NO_LISTENERS
  const out = []
  for (const [i, key] of [[0, 'onStdout'], [1, 'onStderr']]) {
    const fn = o && o[key]
    if (fn === undefined || fn === null) continue
    if (typeof fn !== 'function') throw errors.invalidOption(`${key} must be a function, got ${describe(fn)}`)
    out.push([i, fn])
  }
  return out
}

module.exports = { scheduleDrain, listenersOf }
