'use strict'
// The paths of the Mastra face, made absolute once where they enter: a relative path kept as
// given would be resolved again, against another base, wherever it is used later.

const os = require('node:os')
const path = require('node:path')
const { InvalidProcessCwdError, invalidOption } = require('./errors')
const { describe } = require('./util')

function nodeCwd() {
  return process.cwd()
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
  if (p === undefined || p === null) return path.join(nodeCwd(), '.sandbox')
  if (typeof p !== 'string') throw new InvalidProcessCwdError(`invalid working directory ${describe(p)}: ${name} must be a string`)
  const expanded = expandTilde(p)
  if (path.isAbsolute(expanded)) return path.resolve(expanded)
  return path.resolve(nodeCwd(name, p), expanded)
}

/** A sandbox's `checkpointsDirectory` option as an absolute path; `undefined` when not given. */
function absoluteCheckpoints(p) {
  // Mastra's own rule: an empty value means the default, next to the working directory.
  if (p === undefined || p === null || p === '') return undefined
  if (typeof p !== 'string') throw invalidOption(`checkpointsDirectory must be a string, got ${describe(p)}`)
  const expanded = expandTilde(p)
  return path.isAbsolute(expanded) ? path.resolve(expanded) : path.resolve(nodeCwd('checkpointsDirectory', p), expanded)
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
  const fromNode = path.resolve(cwd)
  return fromNode === wd || fromNode.startsWith(`${wd}${path.sep}`) ? fromNode : path.resolve(wd, cwd)
}

module.exports = { nodeCwd, absoluteDirectory, absoluteCheckpoints, commandCwd }
