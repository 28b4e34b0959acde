// procvisor/mastra, ES module entry: the procvisor-backed Mastra classes built over the ES module
// build of the application's @mastra/core/workspace (the one `import ... from '@mastra/core/workspace'`
// gives), so `instanceof LocalSandbox` and Mastra's base-class behaviour are the application's own.
// See index.js for the CommonJS entry (which shares define-classes.js) and index.d.ts for the API.
import { createRequire } from 'node:module'

const require = createRequire(import.meta.url)
const { defineMastraClasses, defineProcessTools, mastraMissing, shellQuote, SandboxSnapshotError, SandboxSupervisorLostError, SandboxProtocolError, SandboxAccessError } = require('./index.js')
const { importFromApplication } = require('../lib/mastra/application.js')

// The tools' modules load beside the classes' (all at once); without them only
// createProcessTools fails, when it is called.
const toolModules = Promise.all([importFromApplication('@mastra/core/tools'), importFromApplication('zod')])
toolModules.catch(() => {})
let workspace
try {
  workspace = await importFromApplication('@mastra/core/workspace')
} catch (err) {
  throw mastraMissing(err)
}
let makeTools
try {
  const [tools, zod] = await toolModules
  makeTools = defineProcessTools({ createTool: tools.createTool, z: zod.z, prefix: workspace.WORKSPACE_TOOLS_PREFIX ?? 'mastra_workspace' })
} catch (err) {
  const missing = mastraMissing(err)
  makeTools = () => {
    throw missing
  }
}

const classes = defineMastraClasses(workspace)

export const NativeProcessHandle = classes.NativeProcessHandle
export const NativeProcessManager = classes.NativeProcessManager
export const NativeLocalSandbox = classes.NativeLocalSandbox
/** Alias of NativeLocalSandbox, for `import { LocalSandbox } from 'procvisor/mastra'`. */
export const LocalSandbox = classes.NativeLocalSandbox
/**
 * Mastra tools for the sandbox's processes and terminals (wait_for_port, wait_for_log,
 * read_logs, list_processes, terminal_open/write/read/close), made with the application's own
 * `createTool` and zod; see index.d.ts.
 */
export const createProcessTools = (workspace, options) => makeTools(workspace, options)
export { defineMastraClasses, defineProcessTools, shellQuote, SandboxSnapshotError, SandboxSupervisorLostError, SandboxProtocolError, SandboxAccessError }
