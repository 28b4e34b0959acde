'use strict'
// Where a sandbox's processes run: its process backend. Two implement one interface, each
// over the in-process backend, procvisor's ProcessManager (lib/faces/manager.js):
//
//   local.js   in this Node process: the running sandbox's ProcessManager, directly
//   remote.js  under a persistent sandbox's supervisor, whose calls map one for one onto its
//              ProcessManager (lib/persistent/server/processes.js, terminals.js)
//
// NativeProcessManager and `sandbox.terminals` are written once over it:
//
//   spawn(manager, handle, command, spec)   launches `command` and attaches `handle` to it
//                                           (`{ port, pid, name, feed }`: its output and end
//                                           from the first byte, lib/process/port.js for the rest)
//   list(manager)                           ProcessInfo of every process the manager has
//   get(manager, pid)                       a handle by pid or name, or undefined
//   release(manager, pid)                   the backend forgets it too
//   createTerminal(sandbox, spec)           a Terminal (lib/faces/terminal.js) over its port
//   getTerminal(sandbox, id), listTerminals(sandbox)
//
// Per process, everything else (signals, stdin, logs from a cursor, status, the waits) goes
// through its port, whose faces (ProcessHandle as a handle's `nativeHandle`, Terminal) are the
// same classes on both. What holds a sandbox running is its runtime's (runtime/).

const { local } = require('./local.js')
const { remote } = require('./remote.js')

/** The calls of the interface, which each backend has. */
const CALLS = ['spawn', 'list', 'get', 'release', 'createTerminal', 'getTerminal', 'listTerminals']

module.exports = { local, remote, CALLS }
