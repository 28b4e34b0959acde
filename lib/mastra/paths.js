'use strict'
// The paths of the Mastra face, made absolute once where they enter: a relative path kept as
// given would be resolved again, against another base, wherever it is used later.

const os = require('node:os')
const path = require('node:path')
const { InvalidProcessCwdError, invalidOption } = require('../native/errors')
const { describe } = require('../native/util')
// `absolutePath(p, option)`: against Node's working directory, by the rule (and with the typed
// error, when that directory is gone) of a ProcessManager's `workingDirectory`.
const { absolutePath } = require('../native/native').binding

/** Mastra's `expandTilde`: `~` and `~/…` name the home directory. */
function expandTilde(p) {
  if (p === '~') return os.homedir()
  if (p.startsWith('~/') || p.startsWith('~\\')) return path.join(os.homedir(), p.slice(2))
  return p
}

/**
 * A sandbox's `workingDirectory` option as an absolute path, resolved against Node's working
 * directory now; absent, Mastra's default `<cwd>/.sandbox`.
 */
function absoluteDirectory(name, p) {
  if (p === undefined || p === null) return absolutePath('.sandbox', name)
  if (typeof p !== 'string') throw new InvalidProcessCwdError(`invalid working directory ${describe(p)}: ${name} must be a string`)
  return absolutePath(expandTilde(p), name)
}

/** A sandbox's `checkpointsDirectory` option as an absolute path; `undefined` when not given. */
function absoluteCheckpoints(p) {
  // Mastra's own rule: an empty value means the default, next to the working directory.
  if (p === undefined || p === null || p === '') return undefined
  if (typeof p !== 'string') throw invalidOption(`checkpointsDirectory must be a string, got ${describe(p)}`)
  return absolutePath(expandTilde(p), 'checkpointsDirectory')
}

/**
 * The absolute working directory of any Mastra sandbox at a spawn (a NativeLocalSandbox's is
 * absolute already); without one, Node's, as Mastra's process managers do.
 */
function sandboxDirectory(sandbox) {
  const wd = sandbox ? sandbox.workingDirectory : undefined
  return absolutePath(typeof wd === 'string' ? wd : '.', 'workingDirectory')
}

/**
 * The absolute directory a command runs in, by Mastra's `LocalProcessManager` rule: no `cwd`,
 * the working directory; an absolute one as given; a relative one that already names a place
 * inside the working directory from Node's working directory (`ws/sub` for the working directory
 * `./ws`) is kept, any other relative one is inside the working directory. A `cwd` that is not a
 * string is returned as is, for the launch to refuse with its typed error.
 */
function commandCwd(wd, cwd) {
  if (!cwd) return wd
  if (typeof cwd !== 'string') return cwd
  if (path.isAbsolute(cwd)) return cwd
  let fromNode
  try {
    fromNode = path.resolve(cwd)
  } catch {
    // Node's working directory is gone: no relative path names a place inside the working directory from there.
    return path.resolve(wd, cwd)
  }
  return fromNode === wd || fromNode.startsWith(`${wd}${path.sep}`) ? fromNode : path.resolve(wd, cwd)
}

/**
 * The name of a checkpoint captured without one (`sandbox.checkpoints.capture()`, `procvisor
 * checkpoint capture`): when it was made (UTC), and 4 hex digits against a tie.
 */
function generatedCheckpointName() {
  const stamp = new Date().toISOString().replace(/[-:]/g, '').replace('T', '-').replace('.', '-').replace('Z', '')
  return `checkpoint-${stamp}-${require('node:crypto').randomBytes(2).toString('hex')}`
}

module.exports = { absoluteDirectory, absoluteCheckpoints, sandboxDirectory, commandCwd, generatedCheckpointName }
