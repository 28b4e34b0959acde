'use strict'
// Where a persistent sandbox's supervisor is found: the private directory of this user's
// sandboxes, and in it one socket, one lock file and one log per sandbox id.
//
// Every Node process of the user computes the same places from the same environment, so that a
// later start() finds the supervisor an earlier one started. Nothing here trusts a directory that
// another user could write to: the socket in it could then be anyone's.

const crypto = require('node:crypto')
const fs = require('node:fs')
const path = require('node:path')
const errors = require('../../native/errors')
const { binding } = require('../../native/native')

/** The longest id of a persistent sandbox, in characters. */
const MAX_ID_LENGTH = 128
/** The bytes a socket path may have: `sun_path` less its terminating NUL (108 on Linux, 104 on macOS). */
const MAX_SOCKET_PATH = process.platform === 'linux' ? 107 : 103
/** The name of a socket file: `sandbox-` and 32 hex digits of the id's hash, then `.sock`. */
const SOCKET_NAME_LENGTH = 'sandbox-'.length + 32 + '.sock'.length

/**
 * Checks the id of a persistent sandbox: a string of 1 to 128 characters, none of them a control
 * character (U+0000–U+001F, U+007F–U+009F). The id names the sandbox to every Node process and
 * is written in logs and messages; its length bounds what is sent to the supervisor.
 */
function checkId(id) {
  if (typeof id !== 'string') throw errors.invalidOption(`id must be a string for a persistent sandbox, not ${typeof id}`)
  if (id.length === 0 || id.length > MAX_ID_LENGTH) {
    throw errors.invalidOption(`id of a persistent sandbox must have 1 to ${MAX_ID_LENGTH} characters, not ${id.length}`)
  }
  const bad = /[\u0000-\u001f\u007f-\u009f]/.exec(id)
  if (bad) throw errors.invalidOption(`id of a persistent sandbox must not contain control characters (U+${bad[0].codePointAt(0).toString(16).toUpperCase().padStart(4, '0')} at ${bad.index})`)
  return id
}

/** The temporary directory `env` names (`TMPDIR`, as os.tmpdir() reads it), else /tmp. */
function tempBase(env) {
  const t = env.TMPDIR
  if (t && path.isAbsolute(t)) return t.replace(/\/+$/, '') || '/'
  return '/tmp'
}

/**
 * `$XDG_RUNTIME_DIR` when it is what the XDG rule asks for: an absolute path to a real directory
 * (not a link) that this user owns and nobody else may enter or write (mode 0700). Anything else
 * is passed over, since another user could replace the sockets in it.
 */
function runtimeBase(env, uid) {
  const runtime = env.XDG_RUNTIME_DIR
  if (!runtime || !path.isAbsolute(runtime)) return null
  try {
    const st = fs.lstatSync(runtime)
    if (st.isDirectory() && st.uid === uid && (st.mode & 0o077) === 0) return runtime
  } catch {}
  return null
}

/** The places the socket directory may be, best first: the runtime directory, then the temp directories. */
function candidates(env, uid) {
  const out = []
  const runtime = runtimeBase(env, uid)
  if (runtime) out.push(path.join(runtime, 'procvisor'))
  out.push(path.join(tempBase(env), `procvisor-${uid}`))
  out.push(`/tmp/procvisor-${uid}`)
  return [...new Set(out)]
}

/** Whether a socket in `dir` fits in `sun_path`. */
function fits(dir) {
  return Buffer.byteLength(dir) + 1 + SOCKET_NAME_LENGTH <= MAX_SOCKET_PATH
}

/**
 * The directory of this user's supervisor sockets: `$XDG_RUNTIME_DIR/procvisor` when the runtime
 * directory is private to this user, else `procvisor-<uid>` under the temp directory (`TMPDIR`,
 * then /tmp), whichever first keeps a socket path within `sun_path`. Created 0700; one that exists
 * with another owner or with access for others is refused, since its sockets could be anyone's.
 */
function socketDirectory(env = process.env) {
  const uid = process.getuid()
  const all = candidates(env, uid)
  const dir = all.find(fits)
  if (!dir) {
    throw new errors.SandboxAccessError(
      `no place for the sandbox sockets: a socket path must have at most ${MAX_SOCKET_PATH} bytes, and ${all.join(', ')} are too long (set TMPDIR to a shorter directory)`,
    )
  }
  return privateDirectory(dir)
}

/** Creates `dir` with mode 0700 if it is not there; refuses it unless it is this user's alone. */
function privateDirectory(dir) {
  const uid = process.getuid()
  try {
    fs.mkdirSync(dir, { mode: 0o700 })
  } catch (e) {
    if (e.code !== 'EEXIST') throw new errors.SandboxAccessError(`cannot create the sandbox socket directory ${dir}: ${e.message}`)
  }
  const st = fs.lstatSync(dir)
  if (!st.isDirectory() || st.uid !== uid || (st.mode & 0o077) !== 0) {
    throw new errors.SandboxAccessError(
      `the sandbox socket directory ${dir} must be a directory owned by uid ${uid} with mode 0700 (it has uid ${st.uid}, mode ${(st.mode & 0o777).toString(8)})`,
    )
  }
  return dir
}

/** The socket of the supervisor of sandbox `id` (one per id and user); short enough for sun_path. */
function socketPath(id, dir = socketDirectory()) {
  const digest = crypto.createHash('sha256').update(String(id)).digest('hex').slice(0, 32)
  const sock = path.join(dir, `sandbox-${digest}.sock`)
  if (Buffer.byteLength(sock) > MAX_SOCKET_PATH) {
    throw new errors.SandboxAccessError(`the sandbox socket path ${sock} has ${Buffer.byteLength(sock)} bytes, over the ${MAX_SOCKET_PATH} a Unix socket path may have`)
  }
  return sock
}

/** The lock file held by the supervisor of the socket `sock` for its whole life. */
function lockPathOf(sock) {
  return sock.replace(/\.sock$/, '.lock')
}

/**
 * Whether a live supervisor holds the lock of the socket `sock` (a shared lock is refused).
 * Asked by clients that find no socket: a held lock means the supervisor is there and its socket
 * will be back. The supervisor takes and keeps the lock in server/place.js.
 */
function lockHeld(sock) {
  let fd
  try {
    fd = fs.openSync(lockPathOf(sock), fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW)
  } catch {
    return false
  }
  try {
    return !binding.tryLockFile(fd, false)
  } finally {
    fs.closeSync(fd)
  }
}

/** Where the supervisor of the socket `sock` writes what it has to say on stderr. */
function logPathOf(sock) {
  return sock.replace(/\.sock$/, '.log')
}

module.exports = { MAX_ID_LENGTH, MAX_SOCKET_PATH, checkId, socketDirectory, privateDirectory, socketPath, lockPathOf, lockHeld, logPathOf }
