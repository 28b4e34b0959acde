// A language model for Mastra's Agent that plays a script: the AI SDK's LanguageModelV2
// interface (what @mastra/core accepts as `model`), answering each turn with the next step's tool
// call, or its final text. A step is a function of the tool results so far, so that a call can
// name what an earlier one returned (a pid, a cursor, a terminal id).

/** The tool results in a prompt, oldest first: `{ toolName, output }`, output as the model sees it. */
function toolResults(prompt) {
  const out = []
  for (const m of prompt) {
    if (m.role !== 'tool') continue
    for (const part of m.content) {
      if (part.type !== 'tool-result') continue
      const o = part.output
      out.push({ toolName: part.toolName, error: o.type.startsWith('error'), value: o.value })
    }
  }
  return out
}

/**
 * `steps`: functions of the results so far (`results`, and `last`, the newest) returning
 * `{ tool, input }` or `{ text }`. `model.results` holds the results the model was given.
 */
export function scriptedModel(steps) {
  let turn = 0
  const model = {
    specificationVersion: 'v2',
    provider: 'scripted',
    modelId: 'scripted',
    supportedUrls: {},
    results: [],
    async doGenerate(options) {
      const results = toolResults(options.prompt)
      model.results = results
      if (turn >= steps.length) throw new Error(`the script has ${steps.length} steps; the agent asked for more`)
      const step = steps[turn++]({ results, last: results.at(-1) })
      const content = step.tool
        ? [{ type: 'tool-call', toolCallId: `call-${turn}`, toolName: step.tool, input: JSON.stringify(step.input) }]
        : [{ type: 'text', text: step.text }]
      return {
        content,
        finishReason: step.tool ? 'tool-calls' : 'stop',
        usage: { inputTokens: 1, outputTokens: 1, totalTokens: 2 },
        warnings: [],
      }
    },
    async doStream() {
      throw new Error('the scripted model answers generate() only')
    },
  }
  return model
}
