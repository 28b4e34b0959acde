'use strict'
// The processes' output in shared memory: the supervisor serves each ring's descriptor on a
// socket of its own beside the sandbox's (Node's sockets cannot carry descriptors), and a client
// that maps a process's ring is sent wake-ups and positions instead of the bytes (feed.js).
// Where that cannot work (not Linux, the socket cannot be made), clients are sent the bytes.

const { binding } = require('../../native/native')

/** The descriptors' socket beside `socketPath` (`….sock` → `….fds`, as long: it fits sun_path too). */
function sharedOutputPath(socketPath) {
  return socketPath.replace(/\.sock$/, '') + '.fds'
}

/** Serves the rings' descriptors; the socket's path, or null when output goes as bytes. */
function serveSharedOutput(socketPath) {
  if (process.env.PROCVISOR_SHARED_OUTPUT === '0') return null
  const path = sharedOutputPath(socketPath)
  try {
    return binding.startSharedOutputServer(path) ? path : null
  } catch (e) {
    console.error(`procvisor: output goes over the socket as bytes: ${e.message}`)
    return null
  }
}

module.exports = { serveSharedOutput, sharedOutputPath }
