'use strict'
// What a call frame must look like before the supervisor acts on it. Any process of this user
// can connect to the socket, and a client of a broken or hostile build can send anything: a frame
// that is not a call, an op that is not one of ours (`__proto__`, `constructor`), or arguments of
// the wrong type. Each is answered with a SandboxProtocolError for that call, never a throw that
// reaches the supervisor's event loop.

const errors = require('../../native/errors')
const util = require('../../native/util')
const { validName } = require('../../process/names')

/** A value as a message names it, short whatever its size. */
function describe(v) {
  const d = util.describe(v)
  return d.length > 80 ? `${d.slice(0, 77)}...` : d
}

const isObject = (v) => v !== null && typeof v === 'object' && !Array.isArray(v)
const isStrings = (v) => Array.isArray(v) && v.every((x) => typeof x === 'string')

/** Each argument type: a test and what it should have been. `?` types also take undefined. */
const TYPES = {
  pid: [(v) => (typeof v === 'string' && (/^\d{1,10}$/.test(v) || validName(v))) || (Number.isSafeInteger(v) && v >= 0), 'a pid or a process name'],
  string: [(v) => typeof v === 'string', 'a string'],
  bytes: [(v) => Buffer.isBuffer(v), 'bytes'],
  integer: [(v) => Number.isSafeInteger(v), 'an integer'],
  number: [(v) => typeof v === 'number', 'a number'],
  strings: [isStrings, 'a list of strings'],
  list: [Array.isArray, 'a list'],
  env: [(v) => isObject(v) && Object.values(v).every((x) => typeof x === 'string'), 'an object of strings'],
  retention: [(v) => v === 'Infinity' || typeof v === 'number', "a number or 'Infinity'"],
  any: [() => true, 'anything'],
}

/** The arguments of each call the supervisor answers. */
const CALLS = {
  info: {},
  spawn: {
    command: 'string',
    argv: 'strings?',
    cwd: 'string?',
    env: 'env?',
    timeout: 'number?',
    stdinMode: 'string?',
    pty: 'any',
    restart: 'any',
    readiness: 'any',
    liveness: 'any',
    shutdown: 'any',
    maxRetainedBytes: 'retention?',
    name: 'string?',
  },
  list: {},
  describe: { pid: 'pid' },
  lookup: { pid: 'pid' },
  attach: { pid: 'pid' },
  unsubscribe: { pid: 'pid' },
  release: { pid: 'pid' },
  kill: { pid: 'pid', signal: 'any' },
  stdin: { pid: 'pid', data: 'bytes' },
  closeStdin: { pid: 'pid' },
  view: { pid: 'pid', method: 'string', args: 'list?' },
  logsOpen: { pid: 'pid', options: 'any' },
  logsClose: { stream: 'integer' },
  terminalCreate: { argv: 'strings', cwd: 'string?', env: 'env?', cols: 'integer?', rows: 'integer?' },
  terminalGet: { id: 'string' },
  terminalList: {},
  terminalCall: { id: 'string', method: 'string', args: 'list?' },
  terminalLogsOpen: { id: 'string', options: 'any' },
  shutdown: {},
}

function protocolError(message) {
  return new errors.SandboxProtocolError(message)
}

/**
 * Why `m` cannot be answered at all (it is not a call with an id to answer), or null. Such a
 * client is disconnected: nothing it sent can be trusted to be framed as it meant.
 */
function unanswerable(m) {
  if (!isObject(m)) return `a frame must be an object, got ${describe(m)}`
  if (m.t !== 'call') return `a client may send only calls after its hello, got ${describe(m.t)}`
  // Parts of a reply name its call in 32 bits.
  if (!Number.isInteger(m.id) || m.id < 0 || m.id > 0xffffffff) return `a call's id must be an integer from 0 to 2^32-1, got ${describe(m.id)}`
  return null
}

/** The op of call `m` from `ops` (a null-prototype table) with its checked arguments; throws a protocol error. */
function resolve(ops, m, version) {
  const name = m.op
  if (typeof name !== 'string' || !Object.hasOwn(CALLS, name) || !Object.hasOwn(ops, name)) {
    throw protocolError(`this supervisor (procvisor ${version}) has no call ${describe(name)}`)
  }
  const args = m.args === undefined ? {} : m.args
  if (!isObject(args)) throw protocolError(`the arguments of ${name} must be an object, got ${describe(args)}`)
  for (const [key, spec] of Object.entries(CALLS[name])) {
    const optional = spec.endsWith('?')
    const [test, what] = TYPES[optional ? spec.slice(0, -1) : spec]
    const v = Object.hasOwn(args, key) ? args[key] : undefined
    if (v === undefined && (optional || spec === 'any')) continue
    if (!test(v)) throw protocolError(`${name}: ${key} must be ${what}, got ${describe(v)}`)
  }
  return [ops[name], args]
}

/**
 * Bytes that call `name` gives a process to read (stdin, a terminal's keys): held by the
 * supervisor until the process reads them, so bounded per client (protocol.INPUT_WINDOW).
 */
function inputBytes(name, args) {
  if (name === 'stdin') return args.data.length
  if (name === 'terminalCall' && args.method === 'write' && Array.isArray(args.args)) {
    const data = args.args[0]
    if (typeof data === 'string' || Buffer.isBuffer(data)) return data.length
  }
  return 0
}

module.exports = { CALLS, unanswerable, resolve, inputBytes }
