'use strict'
// What every process tool shares: the sandbox it works on, its limits, and failures as a
// sentence the model can act on (Mastra hands a tool's thrown message to the model as it is).
// A tool fails with procvisor's typed errors (their codes from the one list), so a program that
// calls `execute` itself branches on `code` or `instanceof` as it does anywhere else.

const { describe } = require('../../lib/native/util.js')
const errors = require('../../lib/native/errors.js')
const { codes } = errors

/** An error as a tool throws it: procvisor's typed errors as they are, with what to do next where the model needs it. */
function failure(e) {
  if (e?.code === codes.SANDBOX_SUPERVISOR_LOST && !/must be started again/.test(e.message)) {
    return new errors.SandboxSupervisorLostError(`${e.message}. The sandbox must be started again before its processes can be used.`, { cause: e })
  }
  return e instanceof Error ? e : new Error(String(e))
}

/**
 * The sandbox of `workspace` (a Mastra Workspace, or the sandbox itself): a NativeLocalSandbox,
 * the only one with terminals and procvisor's process API.
 */
function sandboxOf(workspace) {
  const sandbox = workspace && typeof workspace === 'object' && 'sandbox' in workspace ? workspace.sandbox : workspace
  if (!sandbox || typeof sandbox !== 'object' || !sandbox.terminals || !sandbox.processes || !sandbox._backend) {
    throw new TypeError("this workspace's sandbox is not procvisor's NativeLocalSandbox, so the process tools cannot use it")
  }
  return sandbox
}

/** A wait's timeout: the call's, else the default, never beyond the most the tools allow. */
function bounded(timeoutMs, options) {
  return Math.min(timeoutMs ?? options.timeoutMs, options.maxTimeoutMs)
}

/** `text` cut to `max` characters, keeping its 'head' or its 'tail', saying so. */
function clip(text, max, keep) {
  if (text.length <= max) return text
  return keep === 'tail' ? `…${text.slice(text.length - max)}` : `${text.slice(0, max)}…`
}

/** The options of createProcessTools, checked, with their defaults. */
function toolOptions(o) {
  if (o === undefined || o === null) o = {}
  if (typeof o !== 'object' || Array.isArray(o)) throw new TypeError(`createProcessTools options must be an object, got ${describe(o)}`)
  const out = { maxLogBytes: 16 * 1024, timeoutMs: 30_000, maxTimeoutMs: 600_000, quietMs: 300 }
  for (const [k, v] of Object.entries(o)) {
    if (!(k in out)) throw new TypeError(`unknown createProcessTools option ${JSON.stringify(k)} (known: ${Object.keys(out).join(', ')})`)
    if (!Number.isSafeInteger(v) || v < 0) throw new RangeError(`createProcessTools option ${k} must be a non-negative integer, got ${describe(v)}`)
    out[k] = v
  }
  return out
}

module.exports = { failure, sandboxOf, bounded, clip, toolOptions }
