'use strict'
// Bringing a stack up and down over any face that runs named processes. A face gives a small
// target: `find(name)` (the view of its live process of that name, or null), `spawn(name, spec)`
// (starts it with that name; resolves with its view). A view has `status()` and `stop()`.

const path = require('node:path')
const errors = require('../native/errors')
const { binding } = require('../native/native')

/** How often a dependency's status is read while a dependant waits for it. */
const POLL_MS = 50

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

/** What a spawn of the face takes for one process of a checked config. */
function specOf(config, name) {
  const p = config.processes[name]
  const base = config.workingDirectory
  const spec = { command: p.command }
  // A process's cwd is the stack's, unless it says otherwise (relative to the stack's); a stack
  // without one leaves the cwd to the face's own rule.
  if (base !== undefined) spec.cwd = path.resolve(base, p.cwd ?? '.')
  else if (p.cwd !== undefined) spec.cwd = p.cwd
  for (const key of ['env', 'restart', 'readiness', 'liveness', 'shutdown', 'pty']) if (p[key] !== undefined) spec[key] = p[key]
  return spec
}

/** Whether `status` meets `condition`: true, false (not yet), or the reason it never will. */
function verdict(condition, status, probes) {
  const exited = status.state === 'exited'
  const how = () => (status.exit?.signal ? `was ended by ${status.exit.signal}` : `exited with code ${status.exit?.code}`)
  switch (condition) {
    case 'started':
      return true
    case 'ready':
      if (status.ready === true) return true
      return exited ? `${how()} before it was ready` : false
    case 'healthy':
      // A service between two runs is neither: only a run that is up counts.
      if (status.state === 'running' && status.healthy === true && (probes.readiness === undefined || status.ready === true)) return true
      return exited ? `${how()} before it was healthy` : false
    case 'completed':
      return exited
    case 'completed-successfully':
      if (!exited) return false
      return status.exit?.code === 0 ? true : `${how()}, not 0`
  }
  throw new Error(`procvisor: unknown condition ${condition}`)
}

/** Waits until `view` (process `dep`) meets `condition`; a dependency that never will fails `name`. */
async function waitFor(name, dep, condition, view, probes, signal) {
  for (;;) {
    if (signal?.aborted) throw new errors.ProcessAbortedError(`${name} was not started: up() was aborted while it waited for ${dep} to be ${condition}`)
    const status = await view.status()
    const v = verdict(condition, status, probes)
    if (v === true) return
    if (typeof v === 'string' || status.gaveUp) {
      const reason = typeof v === 'string' ? v : 'gave up restarting'
      const err = new errors.ProcessExitedBeforeReadyError(`${name} depends on ${dep} being ${condition}, and ${dep} ${reason}: ${name} was not started`)
      Object.assign(err, { process: name, dependency: dep, condition, pid: status.pid, exitCode: status.exit?.code ?? null })
      if (status.exit?.signal) err.signal = status.exit.signal
      throw err
    }
    await sleep(POLL_MS)
  }
}

/**
 * Starts every process of `config` (checked) that is not running by its name, each once its
 * dependencies meet their conditions. `onProgress(name, what)` hears of each step; an abort of
 * `signal` ends a wait (what started runs on). Resolves with `{ started, running }`, names in
 * start order.
 */
async function up(target, config, { onProgress = () => {}, signal } = {}) {
  const views = new Map()
  const started = []
  const running = []
  for (const name of config.order) {
    const p = config.processes[name]
    if (signal?.aborted) throw new errors.ProcessAbortedError(`${name} was not started: up() was aborted`)
    for (const [dep, condition] of Object.entries(p.dependsOn ?? {})) {
      if (condition === 'started') continue
      await waitFor(name, dep, condition, views.get(dep), config.processes[dep], signal)
      onProgress(dep, condition)
    }
    const live = await target.find(name)
    if (live) {
      views.set(name, live)
      running.push(name)
      onProgress(name, 'already running')
      continue
    }
    let view
    try {
      view = await target.spawn(name, specOf(config, name))
    } catch (e) {
      // A value only the spawn checks: what this call started goes, so nothing is left half up.
      if (e instanceof errors.InvalidProcessOptionError || e instanceof errors.InvalidProcessCommandError) {
        e.message = `processes.${name}: ${e.message}`
        for (const n of started.reverse()) await views.get(n).stop()
      }
      throw e
    }
    views.set(name, view)
    started.push(name)
    onProgress(name, `started (pid ${(await view.status()).pid})`)
  }
  return { started, running }
}

/**
 * Stops the processes of `config` that are running, in the reverse of the start order, each
 * through its own shutdown, one after the other. Resolves with `{ stopped }` once all have exited.
 */
async function down(target, config, { onProgress = () => {} } = {}) {
  const stopped = []
  for (const name of [...config.order].reverse()) {
    const view = await target.find(name)
    if (!view) continue
    const exit = await view.stop()
    stopped.push(name)
    const signal = typeof exit?.signal === 'number' ? binding.signalName(exit.signal) ?? exit.signal : exit?.signal
    onProgress(name, `stopped (${signal ? `by ${signal}` : `code ${exit?.code}`})`)
  }
  return { stopped }
}

module.exports = { up, down, specOf }
