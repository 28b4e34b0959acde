'use strict'
// A supervisor's hold on its sandbox id: the lock file that makes it the only supervisor of the
// id, and the socket at which clients find it, made again should something delete it.
//
// The lock (flock, exclusive) is held for the supervisor's whole life and let go by the kernel
// when it exits or is killed, so a supervisor that died leaves nothing that looks alive. A socket
// file is no such proof: a temp cleaner may delete it under a live supervisor, and a new start()
// would then have made a second supervisor beside the first. With the lock, the second one finds
// the id held and the client waits for the first to put its socket back.

const fs = require('node:fs')
const net = require('node:net')
const path = require('node:path')
const { binding } = require('../../native/native')
const { lockPathOf, privateDirectory } = require('../wire/location')

/** How often a supervisor checks that its lock file and socket are still in place. */
const CHECK_MS = 1000
/**
 * A client's look at the lock (a shared lock, for an instant) is no holder: a supervisor that
 * finds the lock taken tries a few more times before it leaves the id to the holder.
 */
const LOCK_ATTEMPTS = 5
const LOCK_RETRY_MS = 20

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

/** Whether the open file `fd` is still the file at `file` (not deleted, not replaced). */
function isFileAt(fd, file) {
  try {
    const a = fs.fstatSync(fd)
    const b = fs.lstatSync(file)
    return a.ino === b.ino && a.dev === b.dev
  } catch {
    return false
  }
}

/**
 * Takes the exclusive lock on `file`: its descriptor, or null when another open file holds it.
 * A lock taken on a file that its holder deleted meanwhile is worth nothing, so it is taken again.
 */
function lockFile(file) {
  for (let attempt = 0; attempt < 10; attempt++) {
    const fd = fs.openSync(file, fs.constants.O_RDWR | fs.constants.O_CREAT | fs.constants.O_NOFOLLOW, 0o600)
    let locked = false
    try {
      locked = binding.tryLockFile(fd, true)
    } finally {
      if (!locked) fs.closeSync(fd)
    }
    if (!locked) return null
    if (isFileAt(fd, file)) return fd
    fs.closeSync(fd)
  }
  return null
}

function listen(server, sock) {
  return new Promise((resolve, reject) => {
    server.once('error', reject)
    server.listen(sock, () => {
      server.removeListener('error', reject)
      resolve()
    })
  })
}

/** One supervisor's lock and socket. `accept` serves a connection; `onLost` runs if the id is lost. */
class Place {
  constructor(sock, accept, onLost) {
    this.sock = sock
    this.lockPath = lockPathOf(sock)
    this.accept = accept
    this.onLost = onLost
    this.lockFd = null
    this.server = null
    this.socketIno = null
    this.checking = null
    this.timer = null
    this.watcher = null
    this.released = false
  }

  /** Takes the id and serves at the socket; false when another supervisor holds the id. */
  async take() {
    for (let attempt = 0; attempt < LOCK_ATTEMPTS && this.lockFd === null; attempt++) {
      if (attempt > 0) await sleep(LOCK_RETRY_MS)
      this.lockFd = lockFile(this.lockPath)
    }
    if (this.lockFd === null) return false
    await this.bind()
    this.timer = setInterval(() => this.check(), CHECK_MS)
    this.timer.unref()
    this.watch()
    return true
  }

  /**
   * Serves at the socket path. Holding the lock, whatever is there is stale (a dead supervisor's
   * socket), and is replaced. A listener whose file was deleted is left open: closing it would
   * unlink the path, which is the new socket's by then.
   */
  async bind() {
    // Paused: the supervisor checks who connected, then reads the connection its own way.
    const server = net.createServer({ pauseOnConnect: true }, this.accept)
    for (let attempt = 0; ; attempt++) {
      try {
        await listen(server, this.sock)
        break
      } catch (e) {
        if (e.code !== 'EADDRINUSE' || attempt >= 4) throw e
      }
      fs.rmSync(this.sock, { force: true })
    }
    fs.chmodSync(this.sock, 0o600)
    this.socketIno = fs.statSync(this.sock).ino
    this.server = server
  }

  /** Whether the file at the socket path is this supervisor's socket. */
  ownsSocket() {
    try {
      return fs.statSync(this.sock).ino === this.socketIno
    } catch {
      return false
    }
  }

  /** Notices a deleted socket or lock file at once where the platform tells; `check` runs anyway. */
  watch() {
    const names = new Set([path.basename(this.sock), path.basename(this.lockPath)])
    try {
      this.watcher = fs.watch(path.dirname(this.sock), { persistent: false }, (event, name) => {
        if (!name || names.has(String(name))) this.check()
      })
      this.watcher.on('error', () => this.watcher.close())
    } catch {}
  }

  /** Puts the lock file and the socket back if they went; one check at a time. */
  check() {
    if (this.released || this.checking) return
    this.checking = this.restore()
      .catch((e) => console.error(`procvisor supervisor: cannot restore ${this.sock}: ${e.message}`))
      .finally(() => (this.checking = null))
  }

  async restore() {
    if (!isFileAt(this.lockFd, this.lockPath)) {
      // The lock file was deleted (with its directory, maybe): another supervisor may have taken
      // a new one. If it did, the id is its now, and this one cannot be reached.
      privateDirectory(path.dirname(this.lockPath))
      const fd = lockFile(this.lockPath)
      if (fd === null) {
        this.release()
        this.onLost()
        return
      }
      fs.closeSync(this.lockFd)
      this.lockFd = fd
    }
    if (!this.released && !this.ownsSocket()) await this.bind()
  }

  /**
   * Stops serving and removes the socket and the lock file, where they are still this
   * supervisor's; the lock itself goes with the process. Returns whether the socket was its own.
   */
  release() {
    if (this.released) return false
    this.released = true
    clearInterval(this.timer)
    if (this.watcher) this.watcher.close()
    // Asked before the server closes, which unlinks the socket path.
    const owned = this.ownsSocket()
    if (owned) {
      this.server.close()
      fs.rmSync(this.sock, { force: true })
    }
    if (this.lockFd !== null && isFileAt(this.lockFd, this.lockPath)) fs.rmSync(this.lockPath, { force: true })
    return owned
  }
}

module.exports = { Place, isFileAt }
