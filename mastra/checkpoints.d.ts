/**
 * `sandbox.checkpoints` of {@link NativeLocalSandbox}: named checkpoints of the working
 * directory. Re-exported by `procvisor/mastra` (index.d.ts).
 * @module
 */
import type { NativeLocalSandbox } from './index'

/** What {@link SandboxCheckpoints.capture} made. */
export interface CheckpointCaptured {
  /** The checkpoint's name: the one given, or one made from the time of the capture. */
  name: string
  /** When the capture was put in place. */
  createdAt: Date
  /** Regular files in the checkpoint. */
  files: number
  /** Bytes of file data in the checkpoint. */
  bytes: number
  /**
   * Bytes this capture wrote: files unchanged since the last capture of the same working
   * directory are shared with it (hard links), and a sparse file's holes are not written.
   */
  newBytes: number
  /** Files shared with the last capture of the same working directory instead of copied. */
  unchanged: number
  /**
   * Entries not in the checkpoint: sockets, FIFOs and devices hold no data to copy, and an entry
   * a process removed while the capture read the tree (`'vanished'`) is left out, as if removed
   * just before. Each is also in a warning of the sandbox's logger.
   */
  skipped: Array<{
    /** Relative to the working directory. */
    path: string
    /** `'socket'`, `'fifo'`, `'character device'`, `'block device'` or `'vanished'`. */
    kind: string
  }>
}

/** One checkpoint of {@link SandboxCheckpoints.list}. */
export interface CheckpointListed {
  /** The checkpoint's name, its directory under `checkpointsDirectory`. */
  name: string
  /**
   * When it was captured; for a checkpoint procvisor keeps no record of (captured by Mastra's
   * own `LocalSandbox`), when its directory was put in place.
   */
  createdAt: Date
  /** Regular files in it. */
  files: number
  /** Bytes of file data in it. */
  bytes: number
  /** Bytes its capture wrote; `undefined` for a checkpoint procvisor keeps no record of. */
  newBytes: number | undefined
}

/** What {@link SandboxCheckpoints.restore} did. */
export interface CheckpointRestored {
  /** The checkpoint's name. */
  name: string
  /** Regular files in the checkpoint, and so in the working directory now. */
  files: number
  /** Bytes of file data in the checkpoint. */
  bytes: number
  /** Bytes written: only files that differed from the checkpoint were copied. */
  newBytes: number
  /** Files left as they were, already the checkpoint's; `files - unchanged` were copied back. */
  unchanged: number
  /** Entries the working directory had and the checkpoint does not, removed (a directory counts once). */
  removed: number
}

/**
 * Named checkpoints of a sandbox's working directory, in its `checkpointsDirectory` (Mastra's
 * layout: `snapshot()` and the restore in `start()` read and write the same ones, and Mastra's
 * own `LocalSandbox` can restore them). Works whether the sandbox runs or not, persistent
 * sandboxes included; the copies run in procvisor's native copier, off the JS thread, and
 * captures and restores of one sandbox object run one at a time.
 *
 * A bad name (not `[A-Za-z0-9][A-Za-z0-9._-]*`, or with `..`) is an
 * `InvalidProcessOptionError`; a name with no checkpoint rejects with `SandboxSnapshotError`
 * (`osCode` `'ENOENT'`), which names it.
 */
export interface SandboxCheckpoints {
  /**
   * Captures the working directory as checkpoint `name` (replacing one of that name), or under a
   * name made from the time when none is given. Files unchanged since the last capture of this
   * working directory (by device, inode, size, mtime and ctime) are hard links to that capture's,
   * so a capture costs what changed. A checkpoint's files are never written after it is made.
   */
  capture(name?: string): Promise<CheckpointCaptured>
  /** Every checkpoint in the checkpoints directory, oldest first. */
  list(): Promise<CheckpointListed[]>
  /**
   * Deletes checkpoint `name`, whoever captured it. Checkpoints that share files with it keep
   * them: a file goes with its last link.
   */
  delete(name: string): Promise<void>
  /**
   * Rolls the working directory back to checkpoint `name` in place: what the checkpoint does not
   * have is removed, files that differ are copied back whole, and the rest is left untouched.
   * The result is what a restore into an empty directory makes: every file, mode, mtime, link,
   * hole and empty directory. Running processes are left alone (a file one has open stays the
   * file it opened).
   */
  restore(name: string): Promise<CheckpointRestored>
}
