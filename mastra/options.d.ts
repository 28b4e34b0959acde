/**
 * The options and results of procvisor/mastra's NativeLocalSandbox beyond Mastra's own: the
 * lifecycle options, what `start()` resolves with, what a checkpoint did. Exported by
 * `procvisor/mastra` (index.d.ts).
 * @module
 */
import type { LocalSandboxOptions, SandboxStartResult } from '@mastra/core/workspace'

/**
 * `LocalSandboxOptions`, plus the lifecycle of a hosted sandbox, locally: a maximum lifetime, a
 * checkpoint taken on stop and restored on start, processes that outlive Node. Every Mastra
 * option keeps its meaning.
 */
export interface NativeLocalSandboxOptions extends LocalSandboxOptions {
  /**
   * The maximum wall-clock lifetime in milliseconds from `start()`. When it is over the sandbox
   * stops itself through the normal stop path, whatever it is doing: the `onStop` hook runs,
   * every process is killed (a running command resolves as a per-command `timeout` does: exit
   * code 124, `timedOut: true`, `killed: true`, and stderr ends with "Process killed: the
   * sandbox's lifetime (timeoutMs) of N ms ended"), a checkpoint is captured with `snapshotOnStop`, and `status` ends at `'stopped'`. A later
   * `start()` (or any command, which starts the sandbox again) begins a new lifetime. The timer
   * never keeps Node alive. `0` means no lifetime. Not 0 or a positive finite number:
   * `InvalidProcessOptionError` from the constructor. (Mastra's own `timeout` option is unrelated
   * and, as in Mastra, unused.)
   *
   * With `persistent`, the lifetime is 300000 (five minutes) unless it names one, and `0` runs it
   * without one, until `stop()` or `destroy()`. It counts from the supervisor's start; attaching again does not extend it. The supervisor enforces it with
   * or without anyone attached: it kills every process (one still running then resolves with
   * exit code 124, `timedOut: true`, `killed: true`, and stderr ends with "Process killed: the
   * sandbox's lifetime (timeoutMs) of N ms ended"), captures the checkpoint with
   * `snapshotOnStop`, and exits (the `onStop` hook does not run; the next call of an attached
   * object rejects with `SandboxSupervisorLostError`).
   */
  timeoutMs?: number
  /**
   * `stop()` captures the working directory as this sandbox's checkpoint (after its processes
   * are killed, so none is writing), and a later `start()` whose working directory is missing or
   * empty restores it. The checkpoint is `checkpointName`, or else a name made from `id` (the id
   * itself when it is a valid checkpoint name of at most 200 bytes, else a valid name cut to fit
   * with a hash of the whole id). `destroy()` deletes the checkpoints this id
   * captured. Not a boolean: `InvalidProcessOptionError`.
   */
  snapshotOnStop?: boolean
  /**
   * The processes run under a supervisor process of the sandbox's own and outlive this Node
   * process, until `stop()`, `destroy()` or the end of the lifetime (`timeoutMs`, five minutes by
   * default, none with `timeoutMs: 0`). The first `start()` starts the supervisor, detached (`sandbox.supervisor` is then
   * `'started'`); a `start()` in any later Node process of the same user, with the same `id` and
   * working directory, attaches to it (`outcome: 'connected'`, `sandbox.supervisor === 'joined'`), and with another
   * working directory throws `InvalidProcessOptionError` (one id is one sandbox). A start that
   * starts the supervisor reports Mastra's outcome for the working directory: `'connected'` when
   * it exists, `'created'` when it does not (see {@link NativeStartResult}). A Node process that exits, or
   * `detach()`, leaves the processes running; the connection keeps Node alive only while a call
   * or a `wait()` is pending.
   *
   * One supervisor per id and user (it holds a lock file of its id for its life, and puts back
   * a deleted socket), reached over a Unix socket in `$XDG_RUNTIME_DIR/procvisor` (when
   * `$XDG_RUNTIME_DIR` is this user's with mode 0700), else in `<tmpdir>/procvisor-<uid>`, else in
   * `/tmp/procvisor-<uid>`, the first where the socket path fits; that directory must be this
   * user's with mode 0700, and the supervisor refuses clients of another uid
   * (`SandboxAccessError`). The supervisor runs without the caller's `NODE_*` variables. A
   * supervisor killed by SIGKILL takes its processes with it. The `id` must be a string of 1 to
   * 128 characters without control characters. Not a boolean, `true` without an `id` (a generated
   * one could never be found again), or a bad `id`:
   * `InvalidProcessOptionError`. Default `false`: nothing outlives Node.
   */
  persistent?: boolean
  /**
   * A directory where every process of the sandbox (commands, spawned processes, terminals) also
   * writes its output log, so that `nativeHandle.logs()` from the start, or `since` a cursor the
   * 1 MiB kept in memory no longer holds, reads on through the files without a gap or a repeat:
   * `<logDirectory>/<process id>.log`, rotated at {@link logMaxBytes} to `.log.1`, `.log.2`…
   * with {@link logKeep} files kept (see `ProcessManagerOptions.logDirectory`). Relative to the
   * working directory; created if missing. Not a directory, or no file can be created in it:
   * `InvalidProcessOptionError` from the constructor. A clone writes to the same directory.
   *
   * With `persistent` the logs are on without it, in `<dirname(workingDirectory)>/.procvisor-logs/<id>`
   * (beside the working directory, as the default checkpoints are); should that directory not be
   * creatable, the output stays in memory only. Each start of the supervisor writes to a
   * directory of its own in there, named by its start time and pid (process ids begin again at
   * each start), and nothing deletes those: `stop()` and `destroy()` leave them. A clone of a
   * persistent sandbox without `logDirectory` gets its own default.
   *
   * `false`: no log files, not even a persistent sandbox's default. Its processes keep their
   * output in memory only (1 MiB each for `logs()`), and a flood costs its supervisor no disk
   * writes; `logs()` since a cursor older than that gets a `truncated` event.
   */
  logDirectory?: string | false
  /** The size in bytes at which a process's log file rotates: an integer from 4096; default 4 MiB. */
  logMaxBytes?: number
  /** How many files of a process's log are kept, the current one included: 1 to 10,000; default 5. */
  logKeep?: number
}

/**
 * What `start()` of a {@link NativeLocalSandbox} resolves with: Mastra's `SandboxStartResult`
 * exactly (`outcome: 'connected'` when the working directory existed or a running sandbox was
 * joined, `'created'` when the working directory was made), persistent or not. Whether a
 * persistent start started its supervisor is {@link NativeLocalSandbox.supervisor}.
 */
export interface NativeStartResult extends SandboxStartResult {}

/** What the last capture or restore of a {@link NativeLocalSandbox} did. */
export interface NativeCheckpointReport {
  /**
   * `'capture'` (stop with `snapshotOnStop`, `snapshot()` or `checkpoints.capture()`) or
   * `'restore'` (on `start()`, or `checkpoints.restore()`).
   */
  operation: 'capture' | 'restore'
  /** The checkpoint's name. */
  name: string
  /** Regular files copied. */
  files: number
  /** Directories made (the root not counted). */
  directories: number
  /** Symbolic links copied as links (never followed). */
  symlinks: number
  /** Bytes of file data. */
  bytes: number
  /** Files cloned (`FICLONE`, on filesystems with reflinks): no data was copied for them. */
  reflinked: number
  /**
   * Bytes of file data written: what was neither shared with the last capture, nor cloned, nor
   * (restoring in place) left as it was; a sparse file's holes are not written.
   */
  newBytes: number
  /**
   * A capture: files shared (hard links) with the last capture of the same working directory. A
   * restore in place: files left as they were.
   */
  unchanged: number
  /** A restore in place: entries the working directory had and the checkpoint does not, removed. */
  removed: number
  /** A capture: when it was put in place, in ms since the epoch; 0 for a restore. */
  createdMs: number
  /**
   * Entries not copied, logged as a warning: sockets, FIFOs and devices hold no data to copy, and a
   * capture leaves out what a process removed while it read the tree (`'vanished'`).
   */
  skipped: Array<{
    /** Relative to the root of the copy. */
    path: string
    /** `'socket'`, `'fifo'`, `'character device'`, `'block device'` or `'vanished'`. */
    kind: string
  }>
  /** Wall time of the copy in milliseconds. */
  durationMs: number
}
