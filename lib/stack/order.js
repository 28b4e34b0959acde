'use strict'
// The start order of a stack: each process after everything it depends on. A cycle has no such
// order, so it is refused, named, before anything starts.

/** What a dependant may wait for of a dependency (`dependsOn: { db: 'ready' }`). */
const CONDITIONS = ['started', 'ready', 'healthy', 'completed', 'completed-successfully']

/**
 * The names of `processes` (name → `{ dependsOn }`, every dependency known) in a start order:
 * the config's own order wherever dependencies allow it, so that a stack starts as it reads.
 * `refuse(message)` makes the error thrown for a cycle.
 */
function order(processes, refuse) {
  const names = Object.keys(processes)
  const done = new Set()
  const out = []
  // Depth first; `path` holds the chain being visited, so meeting one of it again is a cycle.
  const visit = (name, path) => {
    if (done.has(name)) return
    const at = path.indexOf(name)
    if (at !== -1) throw refuse(`the dependencies make a cycle: ${[...path.slice(at), name].join(' -> ')}`)
    path.push(name)
    for (const dep of Object.keys(processes[name].dependsOn ?? {})) visit(dep, path)
    path.pop()
    done.add(name)
    out.push(name)
  }
  for (const name of names) visit(name, [])
  return out
}

module.exports = { order, CONDITIONS }
