'use strict'
// What the supervisors of dead sandboxes left in the socket directory. A supervisor that ends in
// order removes its socket, lock and descriptor socket; one that was killed (SIGKILL, a crash,
// the machine's end) leaves them, and the directory grows with every id never started again.
// Each supervisor, once it serves, removes what belongs to ids whose lock nobody holds and was
// made over an hour ago (a supervisor just killed is left to whoever looks into it, and to
// `procvisor destroy`): under the lock itself, so that no supervisor of such an id can take it
// meanwhile (one that tries finds it held for an instant and tries again, place.js), and the
// lock file last.

const fs = require('node:fs')
const path = require('node:path')
const { binding } = require('../../native/native')
const { isFileAt } = require('./place')

/** How long after a start the directory is swept: nothing of a start waits for it. */
const SWEEP_DELAY_MS = 2000
/**
 * What an id left is swept once its lock file (made when its supervisor started) is this old;
 * its log, once it was last written this long ago too: it is where a failed start tells why.
 */
const STALE_MS = 60 * 60 * 1000
/** A log of a crash (not empty) stays this long, for whoever looks into it. */
const CRASH_LOG_MS = 7 * 24 * 60 * 60 * 1000

/**
 * The exclusive lock of the lock file `file` when nobody holds it and it was made before `before`
 * (its descriptor), else null.
 */
function takeIfStale(file, before) {
  let fd
  try {
    fd = fs.openSync(file, fs.constants.O_RDWR | fs.constants.O_NOFOLLOW)
  } catch {
    return null
  }
  if (fs.fstatSync(fd).mtimeMs > before) {
    fs.closeSync(fd)
    return null
  }
  let free = false
  try {
    free = binding.tryLockFile(fd, true) && isFileAt(fd, file)
  } catch {}
  if (free) return fd
  fs.closeSync(fd)
  return null
}

/** Whether the log `file` can go: neither fresh nor a recent crash's. */
function logExpired(file, now) {
  try {
    const st = fs.lstatSync(file)
    const age = now - st.mtimeMs
    return st.isFile() && age > STALE_MS && (st.size === 0 || age > CRASH_LOG_MS)
  } catch {
    return false
  }
}

/**
 * Removes from `dir` what the supervisors of dead sandboxes left there, but for the socket `own`
 * (this supervisor's); returns the ids swept. Whatever fails is left for the next sweep.
 */
function sweepStale(dir, own, now = Date.now()) {
  const swept = []
  let names
  try {
    names = fs.readdirSync(dir)
  } catch {
    return swept
  }
  const ownBase = path.basename(own, '.sock')
  for (const name of names) {
    if (!name.endsWith('.lock')) continue
    const base = name.slice(0, -'.lock'.length)
    if (base === ownBase) continue
    const lock = path.join(dir, name)
    const fd = takeIfStale(lock, now - STALE_MS)
    if (fd === null) continue
    try {
      for (const ext of ['.sock', '.fds']) fs.rmSync(path.join(dir, base + ext), { force: true })
      const log = path.join(dir, `${base}.log`)
      if (logExpired(log, now)) fs.rmSync(log, { force: true })
      fs.rmSync(lock, { force: true })
      swept.push(base)
    } catch {
      // Left for the next sweep.
    } finally {
      fs.closeSync(fd)
    }
  }
  return swept
}

module.exports = { sweepStale, SWEEP_DELAY_MS, STALE_MS, CRASH_LOG_MS }
