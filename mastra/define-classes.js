'use strict'
// Builds procvisor's Mastra classes over one `@mastra/core/workspace` module namespace: both
// entries (index.js, index.mjs) call it, each with its own build of Mastra.

const { defineNativeProcessHandle } = require('./process-handle.js')
const { defineNativeProcessManager } = require('./process-manager.js')
const { defineNativeLocalSandbox } = require('./sandbox.js')

/**
 * Builds the procvisor-backed classes over one `@mastra/core/workspace` module namespace.
 * `procvisor/mastra` calls it for you; call it yourself only to target another copy of Mastra.
 * @param {typeof import('@mastra/core/workspace')} workspace
 */
function defineMastraClasses(workspace) {
  const { ProcessHandle, SandboxProcessManager, LocalSandbox } = workspace || {}
  if (typeof ProcessHandle !== 'function' || typeof SandboxProcessManager !== 'function' || typeof LocalSandbox !== 'function') {
    throw new TypeError('procvisor/mastra: expected the @mastra/core/workspace module (ProcessHandle, SandboxProcessManager, LocalSandbox)')
  }
  const NativeProcessHandle = defineNativeProcessHandle(ProcessHandle)
  const NativeProcessManager = defineNativeProcessManager(SandboxProcessManager, { NativeProcessHandle })
  const NativeLocalSandbox = defineNativeLocalSandbox(LocalSandbox, { NativeProcessManager })

  return { NativeProcessHandle, NativeProcessManager, NativeLocalSandbox, LocalSandbox: NativeLocalSandbox }
}

module.exports = { defineMastraClasses }
