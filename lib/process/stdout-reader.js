'use strict'
// stdout as a Node Readable over a process's bounded output log (`handle.reader`), and the hold a
// launch puts at the start of stdout so that a reader made right after it misses nothing.

const { Readable } = require('node:stream')
const errors = require('../native/errors')

/**
 * stdout as a byte stream, replaying from the start. It holds the producer back (like the
 * listener pump) from its position, so a protocol reader (JSON-RPC, LSP) never loses bytes: a
 * reader that stops reading slows the child down instead, as a paused `child_process` stream
 * does.
 *
 * `core` is the process's ProcessCore; `pid` names it in the truncation error.
 */
function readerOf(core, pid) {
  const native = core.native
  core.readerMade = true
  let after = 0
  let takenThisTurn = 0
  const nextTurn = () => new Promise((resolve) => setImmediate(() => {
    takenThisTurn = 0
    resolve()
  }))
  // The native side wakes the reader on this thread (new output, a pipe to read on this
  // loop, the process's end); a wait is a promise resolved by that wake-up, not a task on
  // the runtime.
  const waits = { resolve: null }
  const wakeUp = () => new Promise((resolve) => {
    waits.resolve = resolve
    waitingReaders.add(waits)
  })
  let waking = false
  let reading = false
  let held = true
  native.setReaderHold(0)
  const release = () => {
    if (held) {
      held = false
      waitingReaders.delete(waits)
      if (waking) native.setReaderWake(null)
      native.setReaderHold(null)
      abandonedReaders.unregister(stream)
    }
  }
  // One Buffer queued at a time: with the default high-water mark the stream queued several
  // takes while its consumer waited, and `read()` then joined them (`fromList` copied 175 ms of
  // a 1 GiB flood). A take already joins whatever the log holds, so nothing is gained by queueing.
  const stream = new Readable({
    highWaterMark: 0,
    read() {
      if (reading) return
      reading = true
      ;(async () => {
        try {
          // Installed at the first read, not with the stream: until then nothing native holds
          // the stream, so a reader that is never read can still be collected (and its hold
          // released by the registry below).
          if (!waking && held) {
            waking = true
            native.setReaderWake(wakerOf(new WeakRef(waits)))
          }
          for (;;) {
            // Taken at once, a flood would never let the event loop turn: past a share per
            // turn, the next take waits for the loop's next turn.
            if (takenThisTurn >= TAKE_PER_TURN) await nextTurn()
            const read = native.takeStdout(after, 256 * 1024)
            if (read.truncated) {
              throw new errors.ProcessOutputTruncatedError(`the reader of process ${pid} fell behind the bounded output log; output was lost`)
            }
            if (read.next === after) {
              // Nothing after `after`: stdout is complete once the process had finished
              // before the take; otherwise wait to be woken.
              if (read.finished) {
                release()
                return stream.push(null)
              }
              await wakeUp()
              takenThisTurn = 0
              continue
            }
            after = read.next
            if (held) native.setReaderHold(after)
            if (read.data) {
              takenThisTurn += read.data.length
              if (!stream.push(read.data)) return
            }
          }
        } catch (e) {
          release()
          stream.destroy(e)
        } finally {
          reading = false
        }
      })()
    },
    destroy(err, cb) {
      release()
      cb(err)
    },
  })
  abandonedReaders.register(stream, native, stream)
  return stream
}

/** Bytes a reader takes from the log within one turn of the event loop (see `readerOf`). */
const TAKE_PER_TURN = 2 * 1024 * 1024

/**
 * Ends the hold a launch put at the start of stdout, unless a reader took it over. Until then the
 * child could fill the bounded log and block, no further.
 */
function endGraceHold(core) {
  if (!core.graceHold) return
  core.graceHold = false
  if (!core.readerMade) core.native.setReaderHold(null)
}

/**
 * Cores launched since the last check phase, whose grace holds end at the next one: one
 * Immediate for all the launches that settle within a turn (16 in flight settle many per turn),
 * not one each.
 */
let graceHolds = []

function endGraceHolds() {
  const cores = graceHolds
  graceHolds = []
  for (const core of cores) endGraceHold(core)
}

function holdUntilNextTurn(core) {
  core.graceHold = true
  if (graceHolds.push(core) === 1) setImmediate(endGraceHolds)
}

/**
 * Releases the producer hold (and the wake-up) of a reader that was dropped without being ended
 * or destroyed.
 */
const abandonedReaders = new FinalizationRegistry((native) => {
  native.setReaderWake(null)
  native.setReaderHold(null)
})

/**
 * Readers waiting for their wake-up. The native wake-up reaches a reader only through a WeakRef,
 * so it holds no reader alive; this set does while one waits, as a pending native call would.
 * A paused reader is not held: dropped, it is collected and its hold released.
 */
const waitingReaders = new Set()

/** A reader's wake-up, made outside its scope so that it holds nothing of the reader but `ref`. */
function wakerOf(ref) {
  return () => {
    const waits = ref.deref()
    if (!waits || !waits.resolve) return
    const resolve = waits.resolve
    waits.resolve = null
    waitingReaders.delete(waits)
    resolve()
  }
}

module.exports = { readerOf, holdUntilNextTurn }
