'use strict'
// A process as the faces reach it, whichever backend runs it: in this Node process (its
// ProcessCore, lib/process/core.js) or under a persistent sandbox's supervisor (a port over the
// socket, lib/persistent/client/port.js). The faces (lib/faces/) are written once, over this:
//
//   id, pid, command         the Processes API id, the first root's pid, the command line
//   check()                  throws when the process can no longer be reached (a closed manager,
//                            a lost supervisor)
//   hold(promise)            keeps Node alive while `promise` is pending, as a local wait does
//   stdin                    its input queue (lib/process/stdin-queue.js): write(data), close()
//   assertNotExited(pid)     Mastra's rule for stdin after the exit, where the exit is known here
//   reader(pid)              stdout as a Node Readable from its first byte, never losing bytes
//   status(), logs(o), output(o), waitForExit(o), waitForLog(p, o), waitForPort(port, o),
//   stop(), restart(), signal(sig), shutdown(), resize(cols, rows)
//   interrupt(), terminate(), snapshot()          (a process on a terminal)

/** What marks a port: the faces refuse anything else (`new Terminal()` by a user, say). */
const PORT = Symbol('procvisor.port')

function isPort(v) {
  return v !== null && typeof v === 'object' && v[PORT] === true
}

module.exports = { PORT, isPort }
