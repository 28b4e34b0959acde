'use strict'
// A stack's config: `procvisor.config.json` or `procvisor.config.yaml`/`.yml`, or the same object
// given to `up()`. One loader checks it whole before anything runs, so a mistake in the last
// process never leaves the first ones running; each error names the path of the bad key.

const fs = require('node:fs')
const path = require('node:path')
const errors = require('../native/errors')
const { validName } = require('../process/names')
const { order, CONDITIONS } = require('./order')

/** The names `procvisor up` looks for in the current directory, in this order. */
const DEFAULT_FILES = ['procvisor.config.yaml', 'procvisor.config.yml', 'procvisor.config.json']

const TOP_KEYS = ['id', 'workingDirectory', 'timeoutMs', 'processes']
const PROCESS_KEYS = ['command', 'cwd', 'env', 'restart', 'readiness', 'liveness', 'dependsOn', 'shutdown', 'pty']
const PROBE_TARGETS = ['port', 'http', 'log', 'exec']
const PROBE_TIMING = ['periodMs', 'timeoutMs', 'failureThreshold', 'initialDelayMs']

const kind = (v) => (v === null ? 'null' : Array.isArray(v) ? 'an array' : typeof v)
const isObject = (v) => v !== null && typeof v === 'object' && !Array.isArray(v)

function fail(where, at, message) {
  return errors.invalidOption(`${where}: ${at}: ${message}`)
}

function knownKeys(where, at, value, keys) {
  for (const key of Object.keys(value)) {
    if (!keys.includes(key)) throw fail(where, at ? `${at}.${key}` : key, `unknown key (known: ${keys.join(', ')})`)
  }
}

function object(where, at, value) {
  if (!isObject(value)) throw fail(where, at, `must be an object, not ${kind(value)}`)
  return value
}

/**
 * A probe's shape: exactly one target and known timing keys. The values themselves (a port's
 * range, a pattern's cost) are the spawn's own rule, which `up()` meets with the same path.
 */
function checkProbe(where, at, probe) {
  object(where, at, probe)
  knownKeys(where, at, probe, [...PROBE_TARGETS, ...PROBE_TIMING])
  const targets = PROBE_TARGETS.filter((t) => probe[t] !== undefined)
  if (targets.length !== 1) throw fail(where, at, `needs exactly one target of ${PROBE_TARGETS.join(', ')}, has ${targets.length === 0 ? 'none' : targets.join(' and ')}`)
}

function checkProcess(where, name, p) {
  const at = `processes.${name}`
  if (!validName(name)) throw fail(where, at, 'a process name is 1 to 64 of A-Z a-z 0-9 . _ -, not all digits')
  object(where, at, p)
  knownKeys(where, at, p, PROCESS_KEYS)
  const { command } = p
  if (typeof command === 'string') {
    if (command.trim() === '') throw fail(where, `${at}.command`, 'must not be empty')
  } else if (Array.isArray(command)) {
    if (command.length === 0 || command.some((w) => typeof w !== 'string')) throw fail(where, `${at}.command`, 'an argv must be a non-empty array of strings')
  } else {
    throw fail(where, `${at}.command`, `must be a string (run by the shell) or an argv array, not ${kind(command)}`)
  }
  if (p.cwd !== undefined && typeof p.cwd !== 'string') throw fail(where, `${at}.cwd`, `must be a string, not ${kind(p.cwd)}`)
  if (p.env !== undefined) {
    for (const [k, v] of Object.entries(object(where, `${at}.env`, p.env))) {
      if (typeof v !== 'string') throw fail(where, `${at}.env.${k}`, `must be a string, not ${kind(v)}`)
    }
  }
  for (const key of ['restart', 'shutdown']) if (p[key] !== undefined) object(where, `${at}.${key}`, p[key])
  for (const key of ['readiness', 'liveness']) if (p[key] !== undefined) checkProbe(where, `${at}.${key}`, p[key])
  if (p.pty !== undefined && typeof p.pty !== 'boolean' && !isObject(p.pty)) throw fail(where, `${at}.pty`, `must be a boolean or an object, not ${kind(p.pty)}`)
  if (p.dependsOn !== undefined) {
    for (const [dep, condition] of Object.entries(object(where, `${at}.dependsOn`, p.dependsOn))) {
      if (!CONDITIONS.includes(condition)) throw fail(where, `${at}.dependsOn.${dep}`, `must be one of ${CONDITIONS.join(', ')}, not ${JSON.stringify(condition)}`)
    }
  }
}

/**
 * The config checked and completed: `{ id, workingDirectory, timeoutMs, processes, order }`,
 * `order` the names in a start order. `where` names the source in each error (a file, or
 * `config`); a relative `workingDirectory` is taken from `base`.
 */
function checkConfig(config, { where = 'config', base = process.cwd() } = {}) {
  object(where, 'the config', config)
  knownKeys(where, '', config, TOP_KEYS)
  if (config.id !== undefined && (typeof config.id !== 'string' || config.id === '')) throw fail(where, 'id', 'must be a non-empty string')
  if (config.workingDirectory !== undefined && typeof config.workingDirectory !== 'string') throw fail(where, 'workingDirectory', `must be a string, not ${kind(config.workingDirectory)}`)
  if (config.timeoutMs !== undefined && !(Number.isSafeInteger(config.timeoutMs) && config.timeoutMs >= 0)) throw fail(where, 'timeoutMs', 'must be a whole number of milliseconds, 0 or more (0: no lifetime)')
  const processes = object(where, 'processes', config.processes)
  if (Object.keys(processes).length === 0) throw fail(where, 'processes', 'names no process')
  for (const [name, p] of Object.entries(processes)) checkProcess(where, name, p)
  for (const [name, p] of Object.entries(processes)) {
    for (const [dep, condition] of Object.entries(p.dependsOn ?? {})) {
      const at = `processes.${name}.dependsOn.${dep}`
      if (!Object.hasOwn(processes, dep)) throw fail(where, at, `${name} depends on ${dep}, which is not a process of the stack`)
      if (condition === 'ready' && processes[dep].readiness === undefined) throw fail(where, at, `${dep} has no readiness probe, so it is never ready`)
      if (condition === 'healthy' && processes[dep].liveness === undefined) throw fail(where, at, `${dep} has no liveness probe, so it is never healthy`)
    }
  }
  const startOrder = order(processes, (message) => fail(where, 'processes', message))
  return {
    id: config.id,
    workingDirectory: config.workingDirectory === undefined ? undefined : path.resolve(base, config.workingDirectory),
    timeoutMs: config.timeoutMs,
    processes,
    order: startOrder,
  }
}

/** The parsed text of a config file; a syntax error names the line and column. */
function parseText(file, text) {
  if (/\.json$/i.test(file)) {
    try {
      return JSON.parse(text)
    } catch (e) {
      const at = /position (\d+)/.exec(e.message)
      if (!at) throw errors.invalidOption(`${file}: not JSON: ${e.message}`)
      const before = text.slice(0, Number(at[1])).split('\n')
      throw errors.invalidOption(`${file}:${before.length}:${before.at(-1).length + 1}: not JSON: ${e.message}`)
    }
  }
  const YAML = require('yaml')
  const doc = YAML.parseDocument(text, { prettyErrors: true, uniqueKeys: true })
  const bad = doc.errors[0]
  if (bad) {
    const [line, col] = bad.linePos?.[0] ? [bad.linePos[0].line, bad.linePos[0].col] : [0, 0]
    const text = bad.message.split('\n')[0].replace(/ at line \d+, column \d+:?$/, '')
    throw errors.invalidOption(`${file}:${line}:${col}: not YAML (line ${line}, column ${col}): ${text}`)
  }
  return doc.toJS()
}

/** Reads, parses and checks a config file; `file` undefined: the first default in `dir`. */
function loadConfig(file, dir = process.cwd()) {
  if (file === undefined) {
    file = DEFAULT_FILES.map((f) => path.join(dir, f)).find((f) => fs.existsSync(f))
    if (file === undefined) throw errors.invalidOption(`no ${DEFAULT_FILES.join(', ')} in ${dir}`)
  }
  const full = path.resolve(dir, file)
  if (!/\.(json|ya?ml)$/i.test(full)) throw errors.invalidOption(`${file}: a config file is .json, .yaml or .yml`)
  let text
  try {
    text = fs.readFileSync(full, 'utf8')
  } catch (e) {
    throw errors.invalidOption(`${file}: cannot be read (${e.code ?? e.message})`)
  }
  const config = checkConfig(parseText(file, text), { where: file, base: path.dirname(full) })
  // A file's stack runs where the file is, unless it says otherwise.
  return { file: full, ...config, workingDirectory: config.workingDirectory ?? path.dirname(full) }
}

module.exports = { loadConfig, checkConfig, parseText, DEFAULT_FILES }
