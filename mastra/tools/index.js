'use strict'
// createProcessTools: Mastra tools, made with the application's own `createTool` and zod, that
// give an agent the sandbox's processes, terminals and checkpoints (process-tools.js,
// terminal-tools.js, checkpoint-tools.js).

const { failure, sandboxOf, toolOptions } = require('./common.js')
const { processTools } = require('./process-tools.js')
const { terminalTools } = require('./terminal-tools.js')
const { checkpointTools } = require('./checkpoint-tools.js')

/**
 * Builds `createProcessTools` over one copy of Mastra: its `createTool` (@mastra/core/tools), its
 * zod (`z`) and its workspace tool prefix (`WORKSPACE_TOOLS_PREFIX`, 'mastra_workspace').
 */
function defineProcessTools({ createTool, z, prefix }) {
  /**
   * The tools, by name (`<prefix>_wait_for_port`, ...), for an Agent's `tools` beside the
   * workspace's own. `workspace`: a Mastra Workspace whose sandbox is a NativeLocalSandbox, or
   * that sandbox.
   */
  return function createProcessTools(workspace, options) {
    const o = toolOptions(options)
    // Checked now where it can be: a Workspace without a sandbox is a mistake made here, not by the model.
    if (!workspace || typeof workspace !== 'object') throw new TypeError('createProcessTools needs a Mastra Workspace (or its NativeLocalSandbox)')
    if ('sandbox' in workspace && !workspace.sandbox) throw new TypeError('createProcessTools needs a Workspace with a sandbox (a NativeLocalSandbox)')
    const tool = (name, spec) =>
      createTool({
        id: `${prefix}_${name}`,
        description: spec.description,
        inputSchema: spec.inputSchema,
        outputSchema: spec.outputSchema,
        async execute(input, context) {
          try {
            return await spec.execute(input, sandboxOf(workspace), context)
          } catch (e) {
            throw failure(e)
          }
        },
      })
    const ctx = { z, tool, options: o }
    const tools = {}
    for (const t of [...processTools(ctx), ...terminalTools(ctx), ...checkpointTools(ctx)]) tools[t.id] = t
    return tools
  }
}

module.exports = { defineProcessTools }
