'use strict'
// A NativeLocalSandbox's checkpoints: Mastra's layout and capture protocol, the copies done by
// procvisor's native copier, the name made from an id for `snapshotOnStop`, and named
// checkpoints (`sandbox.checkpoints`): captures that share unchanged files with the last one,
// and restores in place that write only what differs.

const path = require('node:path')
const fsp = require('node:fs/promises')
const crypto = require('node:crypto')
const errors = require('../lib/native/errors.js')
const { SandboxSnapshotError } = errors
const { binding } = require('../lib/native/native.js')
const { generatedCheckpointName: generatedName } = require('../lib/mastra/paths.js')

/**
 * The longest checkpoint name made from an id, in bytes: with the prefixes and suffixes of the
 * capture's temporary entries (`.tmp-owner-<name>-<hex>`) it stays within a file name's 255.
 */
const MAX_CHECKPOINT_NAME = 200

/**
 * The checkpoint name of a sandbox that has none configured: its id when that is a valid name of
 * at most 200 bytes, otherwise a valid name made from it (cut to fit), with a hash of the whole
 * id so two ids never share one and a later start with the same id finds it again.
 */
function checkpointNameFor(id) {
  const text = String(id)
  const safe = text.replace(/[^A-Za-z0-9._-]+/g, '-').replace(/\.{2,}/g, '.')
  const name = /^[A-Za-z0-9]/.test(safe) ? safe : `sandbox-${safe}`
  if (name === text && name.length <= MAX_CHECKPOINT_NAME) return name
  const hash = crypto.createHash('sha256').update(text).digest('hex').slice(0, 10)
  // ASCII only by now: a character is a byte.
  return `${name.slice(0, MAX_CHECKPOINT_NAME - hash.length - 1)}-${hash}`
}

/**
 * Whether a checkpoint directory exists. Mastra's rule: a capture by Mastra's `LocalSandbox` (or
 * one of ours where the filesystem cannot swap in one step) renames the old checkpoint away an
 * instant before the new one takes its place, so a miss is tried twice more, 25 ms apart.
 */
async function checkpointReadable(dir) {
  for (let attempt = 0; attempt < 3; attempt++) {
    if (attempt > 0) await new Promise((resolve) => setTimeout(resolve, 25))
    try {
      return (await fsp.stat(dir)).isDirectory()
    } catch {}
  }
  return false
}

/**
 * One sandbox's captures and restores, one at a time (a restore in the middle of a capture would
 * be copied half-done), and what the last one did. The sandbox makes it with the checkpoints
 * directory, which Mastra's constructor fixed, and calls it for `snapshot()`, the restore in
 * `start()` and the deletion in `destroy()`; `sandbox.checkpoints` runs on it too.
 */
class Checkpointing {
  constructor(sandbox, directory) {
    this.sandbox = sandbox
    this.directory = directory
    this.chain = Promise.resolve()
    /** What the last capture or restore of this sandbox did. */
    this.last = undefined
  }

  /** Runs `work` after every capture and restore started before. */
  turn(work) {
    const run = this.chain.then(work)
    this.chain = run.catch(() => {})
    return run
  }

  /**
   * Mastra's capture protocol (temporary sibling, then renames), done natively; the files
   * unchanged since the last capture of this working directory are shared with it.
   */
  async capture(name) {
    binding.checkCheckpointName(name)
    const sb = this.sandbox
    const report = await binding.captureCheckpoint(sb.workingDirectory, this.directory, name, sb.id)
    this.note('capture', name, report)
    return report
  }

  /** Mastra's restore of an empty or missing working directory on start, from the first of `names` there is. */
  async restoreOnStart(names) {
    const wd = this.sandbox.workingDirectory
    names = names.filter((name) => name !== undefined)
    if (names.length === 0) return
    if ((await fsp.readdir(wd).catch(() => [])).length > 0) return
    for (const name of names) {
      binding.checkCheckpointName(name)
      const dir = path.join(this.directory, name)
      if (!(await checkpointReadable(dir))) continue
      let report
      try {
        report = await binding.restoreCheckpoint(dir, wd)
      } catch (error) {
        // Renamed away mid-restore by a capture swapping in a newer one: the failed restore
        // left the directory empty, so the newer one is restored instead.
        if (!(error instanceof SandboxSnapshotError) || error.osCode !== 'ENOENT') throw error
        if (!(await checkpointReadable(dir))) continue
        report = await binding.restoreCheckpoint(dir, wd)
      }
      this.note('restore', name, report)
      return
    }
  }

  note(operation, name, report) {
    const logger = this.sandbox.logger
    this.last = { operation, name, ...report }
    if (report.skipped.length > 0) {
      logger.warn('Checkpoint skipped entries: sockets, FIFOs and devices hold no data to copy, and a vanished one was removed while the capture read the tree', { checkpointName: name, operation, skipped: report.skipped })
    }
    logger.debug(operation === 'capture' ? 'Captured checkpoint' : 'Restored working directory from checkpoint', {
      checkpointName: name,
      files: report.files,
      bytes: report.bytes,
      durationMs: report.durationMs,
    })
  }

  /** Deletes the checkpoints this sandbox's id captured and nobody captured over since. */
  async removeOwn() {
    const removed = await binding.removeOwnedCheckpoints(this.directory, this.sandbox.id)
    if (removed.length > 0) this.sandbox.logger.debug('Deleted checkpoints', { checkpointNames: removed })
  }
}

/** A checkpoint name given to the API: a string by Mastra's rule, else InvalidProcessOptionError. */
function checkedName(name) {
  if (typeof name !== 'string') throw errors.invalidOption(`a checkpoint name must be a string, got ${name === null ? 'null' : typeof name}`)
  binding.checkCheckpointName(name)
  return name
}


/**
 * `sandbox.checkpoints`: named checkpoints of the working directory, in the sandbox's
 * checkpoints directory (Mastra's layout: `snapshot()` and the restore in `start()` read and
 * write the same ones). Works whether the sandbox runs or not, persistent ones included: the
 * copies are made by this Node process, and the sandbox's processes are left running.
 */
class SandboxCheckpoints {
  constructor(checkpointing) {
    Object.defineProperty(this, '_checkpointing', { value: checkpointing })
  }

  /**
   * Captures the working directory as checkpoint `name` (replacing one of that name), or under a
   * name made from the time. Files unchanged since the last capture of this working directory
   * are shared with it, not copied: `newBytes` is what was written.
   */
  async capture(name) {
    const chosen = name === undefined ? generatedName() : checkedName(name)
    const cp = this._checkpointing
    const r = await cp.turn(() => cp.capture(chosen))
    return { name: chosen, createdAt: new Date(r.createdMs), files: r.files, bytes: r.bytes, newBytes: r.newBytes, unchanged: r.unchanged, skipped: r.skipped }
  }

  /** Every checkpoint in the checkpoints directory, oldest first. */
  async list() {
    const listed = await binding.listCheckpoints(this._checkpointing.directory)
    return listed.map((c) => ({ name: c.name, createdAt: new Date(c.createdMs), files: c.files, bytes: c.bytes, newBytes: c.newBytes }))
  }

  /**
   * Deletes checkpoint `name`, whoever captured it. Checkpoints that share files with it keep
   * them. An unknown name rejects with SandboxSnapshotError (`osCode` 'ENOENT') naming it.
   */
  async delete(name) {
    await binding.deleteCheckpoint(this._checkpointing.directory, checkedName(name))
  }

  /**
   * Rolls the working directory back to checkpoint `name` in place: what the checkpoint does not
   * have is removed, what changed is copied back, the rest is left untouched. The result is what
   * a restore into an empty directory makes. Running processes are left alone.
   */
  async restore(name) {
    checkedName(name)
    const cp = this._checkpointing
    const r = await cp.turn(() => binding.restoreCheckpointInPlace(cp.directory, name, cp.sandbox.workingDirectory))
    cp.note('restore', name, r)
    return { name, files: r.files, bytes: r.bytes, newBytes: r.newBytes, unchanged: r.unchanged, removed: r.removed }
  }
}

module.exports = { checkpointNameFor, checkpointReadable, Checkpointing, SandboxCheckpoints }
