// procvisor/mastra, ES module entry: the procvisor-backed Mastra classes built over the ES module
// build of the application's @mastra/core/workspace (the one `import ... from '@mastra/core/workspace'`
// gives), so `instanceof LocalSandbox` and Mastra's base-class behaviour are the application's own.
// See index.js for the CommonJS entry (which shares define-classes.js) and index.d.ts for the API.
import { createRequire } from 'node:module'

const require = createRequire(import.meta.url)
const { defineMastraClasses, mastraMissing, shellQuote, SandboxSnapshotError, SandboxSupervisorLostError, SandboxProtocolError, SandboxAccessError } = require('./index.js')
const { importFromApplication } = require('../lib/mastra/application.js')

let workspace
try {
  workspace = await importFromApplication('@mastra/core/workspace')
} catch (err) {
  throw mastraMissing(err)
}

const classes = defineMastraClasses(workspace)

export const NativeProcessHandle = classes.NativeProcessHandle
export const NativeProcessManager = classes.NativeProcessManager
export const NativeLocalSandbox = classes.NativeLocalSandbox
/** Alias of NativeLocalSandbox, for `import { LocalSandbox } from 'procvisor/mastra'`. */
export const LocalSandbox = classes.NativeLocalSandbox
export { defineMastraClasses, shellQuote, SandboxSnapshotError, SandboxSupervisorLostError, SandboxProtocolError, SandboxAccessError }
