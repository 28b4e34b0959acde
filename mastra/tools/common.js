'use strict'
// What every process tool shares: the sandbox it works on, its limits, and failures as a
// sentence the model can act on (Mastra hands a tool's thrown message to the model as it is).

const { describe } = require('../../lib/native/util.js')
const { codes } = require('../../lib/native/errors.js')

/** A failure whose message is the whole story: no stack, no cause to unwrap. */
class ToolFailure extends Error {
  constructor(message) {
    super(message)
    this.name = 'ToolFailure'
  }
}

/** An error of procvisor or Mastra as a ToolFailure: its message, which names what went wrong. */
function failure(e) {
  if (e instanceof ToolFailure) return e
  const message = e instanceof Error ? e.message : String(e)
  if (e?.code === codes.SANDBOX_SUPERVISOR_LOST) return new ToolFailure(`${message}. The sandbox must be started again before its processes can be used.`)
  return new ToolFailure(message)
}

/**
 * The sandbox of `workspace` (a Mastra Workspace, or the sandbox itself): a NativeLocalSandbox,
 * the only one with terminals and procvisor's process API.
 */
function sandboxOf(workspace) {
  const sandbox = workspace && typeof workspace === 'object' && 'sandbox' in workspace ? workspace.sandbox : workspace
  if (!sandbox || typeof sandbox !== 'object' || !sandbox.terminals || !sandbox.processes || !sandbox._backend) {
    throw new ToolFailure("this workspace's sandbox is not procvisor's NativeLocalSandbox, so the process tools cannot use it")
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

module.exports = { ToolFailure, failure, sandboxOf, bounded, clip, toolOptions }
