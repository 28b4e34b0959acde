'use strict'
// A NativeLocalSandbox's checkpoints: Mastra's layout and capture protocol, the copies done by
// procvisor's native copier, and the name made from an id for `snapshotOnStop`.

const path = require('node:path')
const fsp = require('node:fs/promises')
const crypto = require('node:crypto')
const { SandboxSnapshotError } = require('../lib/native/errors.js')
const { binding } = require('../lib/native/native.js')

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

/** The sandbox's capture and restore methods (added to NativeLocalSandbox; they use no `super`). */
class CheckpointMethods {
  /**
   * Mastra's `snapshot()`: captures the working directory as the configured checkpoint, one
   * capture at a time; no-op without a checkpoint name. The copy runs in procvisor's native copier.
   */
  async snapshot() {
    if (!this._checkpointName) return
    const run = (this._snapshotChain ?? Promise.resolve()).then(() => this._captureCheckpoint(this._checkpointName))
    this._snapshotChain = run.catch(() => {})
    return run
  }

  /** @internal Mastra's capture protocol (temporary sibling, then renames), done natively. */
  async _captureCheckpoint(name) {
    binding.checkCheckpointName(name)
    const report = await binding.captureCheckpoint(this.workingDirectory, this._checkpointsDirectory, name, this.id)
    this._noteCheckpoint('capture', name, report)
  }

  /** @internal Mastra's restore of an empty or missing working directory on start, done natively. */
  async _seedFromCheckpoint() {
    const names = [this._checkpointName, this._seedCheckpointName].filter((name) => name !== undefined)
    if (names.length === 0) return
    if ((await fsp.readdir(this.workingDirectory).catch(() => [])).length > 0) return
    for (const name of names) {
      binding.checkCheckpointName(name)
      const dir = path.join(this._checkpointsDirectory, name)
      if (!(await checkpointReadable(dir))) continue
      let report
      try {
        report = await binding.restoreCheckpoint(dir, this.workingDirectory)
      } catch (error) {
        // Renamed away mid-restore by a capture swapping in a newer one: the failed restore
        // left the directory empty, so the newer one is restored instead.
        if (!(error instanceof SandboxSnapshotError) || error.osCode !== 'ENOENT') throw error
        if (!(await checkpointReadable(dir))) continue
        report = await binding.restoreCheckpoint(dir, this.workingDirectory)
      }
      this._noteCheckpoint('restore', name, report)
      return
    }
  }

  /** @internal */
  _noteCheckpoint(operation, name, report) {
    this._lastCheckpoint = { operation, name, ...report }
    if (report.skipped.length > 0) {
      this.logger.warn('Checkpoint skipped entries that hold no data to copy', { checkpointName: name, operation, skipped: report.skipped })
    }
    this.logger.debug(operation === 'capture' ? 'Captured checkpoint' : 'Restored working directory from checkpoint', {
      checkpointName: name,
      files: report.files,
      bytes: report.bytes,
      durationMs: report.durationMs,
    })
  }

  /** @internal */
  async _removeOwnCheckpoints() {
    const removed = await binding.removeOwnedCheckpoints(this._checkpointsDirectory, this.id)
    if (removed.length > 0) this.logger.debug('Deleted checkpoints', { checkpointNames: removed })
  }
}

module.exports = { checkpointNameFor, checkpointReadable, CheckpointMethods }
