'use strict'
// A sandbox's runtime: what holds it running, apart from where its processes run (the process
// backends, backends/local.js and backends/remote.js). One is made per sandbox, for its life,
// and owns what the sandbox is attached to while running:
//
//   in-process.js  InProcessRuntime   the running sandbox of this Node process it joined
//                                     (lifetime, terminals, the other objects in it)
//   supervised.js  SupervisedRuntime  the connection to a persistent sandbox's supervisor
//
// Both answer the same calls:
//
//   backend                  the process backend its processes run on
//   logFiles                 where they also log (`logDirectory`, resolved), or null
//   acquire(step, mastra, ...args)
//                            Mastra's acquisition step `step` ('find', 'connect', 'create',
//                            'start') for the sandbox's method of that name, run around
//                            Mastra's own (`mastra[step](...args)`, the sandbox's `_mastraSteps()`)
//   end({ destroy })         for stop() and destroy(), called before anything else of them:
//                            returns { release(), shared, others() }. `release()` lets go of the
//                            running state once the processes' spawns have settled and their
//                            stacks are down, before Mastra's stop kills the rest. `shared` is
//                            the state of this end that every object ending with this one
//                            shares: { destroying, captured } (checkpoint names captured by it),
//                            which the snapshot on stop reads and writes. `others()` runs last:
//                            the other objects of the sandbox stop with it.
//   expiresAt                when the lifetime ends (ms since the epoch), null when it has
//                            none, undefined when not running
//
// What is the same for both (the drain, the stacks, the capture, the order) is written once, in
// the sandbox's stop() and destroy().

const { InProcessRuntime } = require('./in-process.js')
const { SupervisedRuntime } = require('./supervised.js')

/** The runtime of `sandbox`, which keeps it: `settings` are what the sandbox resolved for it (`logFiles`, `checkpointsDirectory`). */
function runtimeOf(sandbox, { persistent, ...settings }) {
  return persistent ? new SupervisedRuntime(sandbox, settings) : new InProcessRuntime(sandbox, settings)
}

module.exports = { runtimeOf }
