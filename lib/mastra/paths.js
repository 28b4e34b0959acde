'use strict'
// The paths of the Mastra face, made absolute once where they enter: a relative path kept as
// given would be resolved again, against another base, wherever it is used later.

const os = require('node:os')
const path = require('node:path')
const { InvalidProcessCwdError, invalidOption } = require('../native/errors')
const { describe } = require('../native/util')

/**
 * Node's working directory, or a typed error when it is gone (deleted under this process):
 * `given` is the path that needed it, `fix` what to do instead.
 */
function nodeCwd(given, fix) {
  try {
    return process.cwd()
  } catch (e) {
    throw new InvalidProcessCwdError(
      `invalid working directory ${JSON.stringify(given)}: it resolves against the working directory of this Node process, which is not available (${e.code || e.message}); ${fix}`,
      { cause: e },
    )
  }
}

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
  if (p === undefined || p === null) return path.join(nodeCwd('.sandbox', `give an absolute ${name}`), '.sandbox')
  if (typeof p !== 'string') throw new InvalidProcessCwdError(`invalid working directory ${describe(p)}: ${name} must be a string`)
  const expanded = expandTilde(p)
  if (path.isAbsolute(expanded)) return path.resolve(expanded)
  return path.resolve(nodeCwd(p, `give an absolute ${name}`), expanded)
}

/** A sandbox's `checkpointsDirectory` option as an absolute path; `undefined` when not given. */
function absoluteCheckpoints(p) {
  // Mastra's own rule: an empty value means the default, next to the working directory.
  if (p === undefined || p === null || p === '') return undefined
  if (typeof p !== 'string') throw invalidOption(`checkpointsDirectory must be a string, got ${describe(p)}`)
  const expanded = expandTilde(p)
  return path.isAbsolute(expanded) ? path.resolve(expanded) : path.resolve(nodeCwd(p, 'give an absolute checkpointsDirectory'), expanded)
}

/**
 * The absolute working directory of any Mastra sandbox at a spawn (a NativeLocalSandbox's is
 * absolute already); without one, Node's, as Mastra's process managers do.
 */
function sandboxDirectory(sandbox) {
  const wd = sandbox ? sandbox.workingDirectory : undefined
  if (typeof wd !== 'string') return nodeCwd('.', 'give the sandbox a workingDirectory')
  return path.isAbsolute(wd) ? path.resolve(wd) : path.resolve(nodeCwd(wd, 'give the sandbox an absolute workingDirectory'), wd)
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
