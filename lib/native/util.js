'use strict'
// Small shared pieces: option checks, abortable sleeps and bounded native waits.

const { Writable } = require('node:stream')
const { invalidOption, ProcessAbortedError } = require('./errors')

/** A duration in milliseconds, or undefined when absent: the native rule, shared by every face. */
function checkMs(name, v) {
  // Required lazily: the addon loads this module first (errors), then is loaded itself.
  const { binding } = require('./native')
  const ms = binding.checkDuration(name, v)
  return ms === null ? undefined : ms
}

function describe(v) {
  if (typeof v === 'string') return JSON.stringify(v)
  if (typeof v === 'number' || typeof v === 'bigint' || typeof v === 'boolean' || v == null) return String(v)
  return typeof v
}

function abortError(signal) {
  const reason = signal && signal.reason
  return new ProcessAbortedError('the wait was aborted; the process keeps running', { cause: reason })
}

function checkSignal(signal, name = 'signal') {
  if (signal !== undefined && signal !== null && !(signal instanceof AbortSignal || (typeof signal === 'object' && typeof signal.aborted === 'boolean' && typeof signal.addEventListener === 'function'))) {
    throw invalidOption(`${name} must be an AbortSignal, got ${describe(signal)}`)
  }
}

/**
 * Repeats `step(sliceMs)` (a bounded native wait) until `done(result)`, the deadline or the abort.
 * Native waits are bounded so that an abandoned wait never keeps the event loop alive for long.
 */
async function boundedWait(step, done, { deadline, signal, onTimeout }) {
  const SLICE = 1000
  for (;;) {
    if (signal && signal.aborted) throw abortError(signal)
    // Slices bound a wait that has a deadline, or one an abort may give up on (a native wait
    // left pending would keep Node alive until the process ends). A plain wait is one native
    // wait, settled by the process's own end.
    let slice = deadline === undefined && !signal ? undefined : SLICE
    let last = false
    if (deadline !== undefined) {
      const left = deadline - Date.now()
      // At or past the deadline, one last look that does not wait: `timeout: 0` on a process
      // that is already over returns its result rather than a timeout.
      last = left <= 0
      slice = Math.min(slice, Math.max(0, Math.ceil(left)))
    }
    const r = await raceAbort(step(slice), signal)
    if (done(r)) return r
    if (last) throw onTimeout()
  }
}

/** Rejects with ProcessAbortedError as soon as `signal` aborts; the promise itself runs on. */
function raceAbort(promise, signal) {
  if (!signal) return promise
  if (signal.aborted) return Promise.reject(abortError(signal))
  return new Promise((resolve, reject) => {
    const onAbort = () => reject(abortError(signal))
    signal.addEventListener('abort', onAbort, { once: true })
    promise.then(
      (v) => {
        signal.removeEventListener('abort', onAbort)
        resolve(v)
      },
      (e) => {
        signal.removeEventListener('abort', onAbort)
        reject(e)
      },
    )
  })
}

/** A handle's stdin as a Node Writable: each chunk through `sendStdin`, `end()` through `closeStdin`. */
function stdinWriter(handle) {
  return new Writable({
    write: (chunk, _enc, cb) => {
      handle.sendStdin(chunk).then(() => cb(), cb)
    },
    final: (cb) => {
      handle.closeStdin().then(() => cb(), cb)
    },
  })
}

module.exports = { checkMs, checkSignal, describe, boundedWait, raceAbort, abortError, stdinWriter }
