'use strict'
// `sandbox.terminals`: programs on a terminal of their own, started the way the sandbox starts
// its processes (working directory, env, isolation, containment) and ended with it. This file
// works out what a terminal runs; the backend runs it: this Node process (backends/local.js) or,
// in a persistent sandbox, its supervisor (backends/remote.js).

const fs = require('node:fs')
const os = require('node:os')
const errors = require('../lib/native/errors.js')
const { describe } = require('../lib/native/util.js')
const { shellQuote } = require('../lib/process/mastra-rules.js')
const { sandboxDirectory, commandCwd } = require('../lib/mastra/paths.js')
const { traceMethods } = require('../lib/native/trace.js')

/** The options `create` reads; another name is a typo that would otherwise be ignored. */
const CREATE_OPTIONS = new Set(['command', 'cols', 'rows', 'cwd', 'env'])

/** The account this Node process runs as, from the password database; undefined without an entry. */
function account() {
  try {
    return os.userInfo()
  } catch {
    return undefined
  }
}

function executable(file) {
  try {
    fs.accessSync(file, fs.constants.X_OK)
    return true
  } catch {
    return false
  }
}

/**
 * What an interactive program expects to find in its environment, where the sandbox's env and
 * the call's leave it unset: the account's home, name and shell, and a UTF-8 locale (TERM is
 * set by the terminal itself). The sandbox's env does not inherit Node's, so these come from
 * the account, not from `process.env`.
 */
function interactiveDefaults(env) {
  const user = account()
  const shell = env.SHELL ?? (user?.shell && executable(user.shell) ? user.shell : '/bin/sh')
  return {
    HOME: user?.homedir || process.env.HOME || '/',
    USER: user?.username || process.env.USER || String(process.getuid?.() ?? ''),
    SHELL: shell,
    LANG: process.platform === 'darwin' ? 'en_US.UTF-8' : 'C.UTF-8',
  }
}

function checkCreateOptions(o) {
  if (o === null || typeof o !== 'object' || Array.isArray(o)) throw errors.invalidOption(`terminal options must be an object, got ${describe(o)}`)
  for (const k of Object.keys(o)) {
    if (!CREATE_OPTIONS.has(k)) throw errors.invalidOption(`unknown terminal option ${JSON.stringify(k)} (known: ${[...CREATE_OPTIONS].join(', ')})`)
  }
  const c = o.command
  const argv = Array.isArray(c) && c.length > 0 && c.every((a) => typeof a === 'string')
  if (c !== undefined && typeof c !== 'string' && !argv) {
    throw errors.invalidOption(`command must be a shell command line or a non-empty list of strings, got ${describe(c)}`)
  }
  if (typeof c === 'string' && c.trim() === '') throw errors.invalidOption('command must not be empty')
  if (o.env !== undefined && (o.env === null || typeof o.env !== 'object' || Array.isArray(o.env))) {
    throw errors.invalidOption(`env must be an object, got ${describe(o.env)}`)
  }
}

/**
 * The launch of one terminal: `{ argv, cwd, env, cols, rows }`, all resolved here, so that the
 * backend (and a persistent sandbox's supervisor) only runs it.
 */
function terminalSpec(sandbox, options) {
  const o = options ?? {}
  checkCreateOptions(o)
  const overlay = { ...sandbox.processes?.env, ...o.env }
  const base = typeof sandbox.buildEnv === 'function' ? sandbox.buildEnv(overlay) : { PATH: process.env.PATH, ...overlay }
  const env = {}
  for (const [k, v] of Object.entries(base)) env[k] = v === undefined ? undefined : String(v)
  // A name the sandbox or the call set, even to undefined (which drops it), is theirs.
  for (const [k, v] of Object.entries(interactiveDefaults(env))) if (!(k in env)) env[k] = v
  // A string is a command line for the shell, as `processes.spawn` takes it; a list runs as is.
  let argv = typeof o.command === 'string' ? ['/bin/sh', '-c', o.command] : o.command ? [...o.command] : [env.SHELL ?? '/bin/sh']
  if (sandbox.isolation && sandbox.isolation !== 'none' && typeof sandbox.wrapCommandForIsolation === 'function') {
    const line = typeof o.command === 'string' ? o.command : argv.map((a) => shellQuote(a)).join(' ')
    const wrapped = sandbox.wrapCommandForIsolation(line)
    argv = [wrapped.command, ...wrapped.args]
  }
  return {
    argv,
    cwd: commandCwd(sandboxDirectory(sandbox), o.cwd),
    env,
    ...(o.cols !== undefined && { cols: o.cols }),
    ...(o.rows !== undefined && { rows: o.rows }),
  }
}

/**
 * The terminals of one sandbox (`sandbox.terminals`). Each is procvisor's `Terminal`; in a
 * persistent sandbox one whose every call goes to the supervisor, which keeps the terminal, its
 * screen and its output for any Node process that attaches later.
 */
class SandboxTerminals {
  constructor(sandbox) {
    this._sandbox = sandbox
  }

  /**
   * Starts `command` (a shell command line, or an argv; default the account's shell) on a
   * terminal of `cols` × `rows` (default 80 × 24), in `cwd` (relative to the sandbox's working
   * directory) with `env` over the sandbox's. Starts the sandbox first if needed, as `spawn` does.
   */
  async create(options) {
    const sandbox = this._sandbox
    const spec = terminalSpec(sandbox, options)
    await sandbox.ensureRunning()
    return sandbox._backend.createTerminal(sandbox, spec)
  }

  /** The terminal with this id, the same object every call; `null` when the sandbox has none by that id. */
  async get(id) {
    if (typeof id !== 'string') return null
    const sandbox = this._sandbox
    await sandbox.ensureRunning()
    return sandbox._backend.getTerminal(sandbox, id)
  }

  /** The running terminals and the last 64 that exited, oldest first. */
  async list() {
    const sandbox = this._sandbox
    await sandbox.ensureRunning()
    return sandbox._backend.listTerminals(sandbox)
  }
}

traceMethods(SandboxTerminals, ['create', 'get', 'list'])

module.exports = { SandboxTerminals, terminalSpec }
