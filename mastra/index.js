'use strict'
/**
 * procvisor/mastra: procvisor as the process backend of Mastra's `LocalSandbox`.
 *
 *   import { NativeLocalSandbox as LocalSandbox } from 'procvisor/mastra'
 *
 * `NativeLocalSandbox` is Mastra's own `LocalSandbox` (every option, lifecycle, mounts, isolation,
 * checkpoints, instructions) with its execa-based process manager swapped for
 * `NativeProcessManager`, whose handles (`NativeProcessHandle`) run on procvisor's native core:
 * process groups killed as a whole, SIGTERM → SIGKILL on timeout, no orphans when Node exits.
 *
 * The classes extend the base classes of the application's own `@mastra/core/workspace` (an
 * optional dependency, listed in `peerDependencies`), so Mastra's env overlay, `ensureRunning`, tracking, output retention,
 * listeners and reader/writer streams are Mastra's code, not a copy.
 *
 * This file is the CommonJS entry: it uses the CommonJS build of `@mastra/core/workspace` and
 * loads it on first use of an export. The ES module entry (`index.mjs`) builds the same classes
 * over the ES module build, so the classes always extend the Mastra that the application imports.
 * Both entries share `defineMastraClasses` (define-classes.js), which builds each class from a
 * file of its own: process-handle.js, process-manager.js, sandbox.js.
 */

const {
  SandboxSnapshotError,
  SandboxSupervisorLostError,
  SandboxProtocolError,
  SandboxAccessError,
} = require('../lib/native/errors.js')
const { defineMastraClasses } = require('./define-classes.js')
const { shellQuote } = require('../lib/process/mastra-rules.js')
const { requireFromApplication } = require('../lib/mastra/application.js')
const { defineProcessTools } = require('./tools/index.js')

/** The error of an application without a usable @mastra/core (the other errors pass as they are). */
function mastraMissing(err) {
  if (err && (err.code === 'MODULE_NOT_FOUND' || err.code === 'ERR_MODULE_NOT_FOUND' || err.code === 'ERR_PACKAGE_PATH_NOT_EXPORTED')) {
    return new Error(`procvisor/mastra needs @mastra/core (>= 1.71.0) installed in the application: npm install @mastra/core (${err.message})`, { cause: err })
  }
  return err
}

// ---- CommonJS entry: the CommonJS build of @mastra/core/workspace, loaded on first use ----------

let classes
function load() {
  if (!classes) {
    let workspace
    try {
      workspace = requireFromApplication('@mastra/core/workspace')
    } catch (err) {
      throw mastraMissing(err)
    }
    classes = defineMastraClasses(workspace)
  }
  return classes
}

let createTools
/**
 * Mastra tools for the sandbox's processes and terminals, made with the application's own
 * `createTool` and zod (tools/index.js); loaded on the first call.
 */
function createProcessTools(workspace, options) {
  if (!createTools) {
    let tools, z, prefix
    try {
      tools = requireFromApplication('@mastra/core/tools')
      prefix = requireFromApplication('@mastra/core/workspace').WORKSPACE_TOOLS_PREFIX
      z = requireFromApplication('zod').z
    } catch (err) {
      throw mastraMissing(err)
    }
    createTools = defineProcessTools({ createTool: tools.createTool, z, prefix: prefix ?? 'mastra_workspace' })
  }
  return createTools(workspace, options)
}

module.exports = {
  defineMastraClasses,
  defineProcessTools,
  createProcessTools,
  mastraMissing,
  shellQuote,
  SandboxSupervisorLostError,
  SandboxProtocolError,
  SandboxAccessError,
  SandboxSnapshotError,
  get NativeProcessHandle() {
    return load().NativeProcessHandle
  },
  get NativeProcessManager() {
    return load().NativeProcessManager
  },
  get NativeLocalSandbox() {
    return load().NativeLocalSandbox
  },
  get LocalSandbox() {
    return load().LocalSandbox
  },
}
