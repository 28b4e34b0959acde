'use strict'
// What an editor shows for the typings: every exported declaration of index.d.ts and mastra/index.d.ts
// has one doc comment, its own (a comment left above another declaration documents that one).
const test = require('node:test')
const assert = require('node:assert/strict')
const path = require('node:path')
const ts = require('typescript')

const ROOT = path.join(__dirname, '..')

/** The doc comments of each top-level declaration of `file`, by name. */
function docs(file) {
  const program = ts.createProgram([file], { noResolve: true, skipLibCheck: true })
  const source = program.getSourceFile(file)
  const out = new Map()
  for (const node of source.statements) {
    if (!node.name) continue
    const ranges = ts.getLeadingCommentRanges(source.text, node.pos) || []
    const comments = ranges.map((r) => source.text.slice(r.pos, r.end)).filter((c) => c.startsWith('/**'))
    const text = (c) =>
      c
        .slice(3, -2)
        .split('\n')
        .map((l) => l.replace(/^\s*\* ?/, '').trim())
        .filter(Boolean)
        .join('\n')
    out.set(node.name.text, comments.map(text))
  }
  return out
}

test('index.d.ts: the resource limits are documented on ProcessLimits, the terminal on TerminalOptions', () => {
  const d = docs(path.join(ROOT, 'index.d.ts'))
  assert.equal(d.get('ProcessLimits').length, 1, 'ProcessLimits has one doc comment')
  assert.match(d.get('ProcessLimits')[0], /^Per-process resource limits/)
  assert.deepEqual(d.get('TerminalOptions').length, 1, `TerminalOptions has one doc comment, not ${JSON.stringify(d.get('TerminalOptions'))}`)
  assert.match(d.get('TerminalOptions')[0], /terminal/)
})

test('no declaration of index.d.ts or mastra/index.d.ts carries two doc comments', () => {
  for (const file of ['index.d.ts', 'mastra/index.d.ts', 'mastra/options.d.ts']) {
    for (const [name, comments] of docs(path.join(ROOT, file))) {
      assert.ok(comments.length <= 1, `${file}: ${name} has ${comments.length} doc comments: ${JSON.stringify(comments)}`)
    }
  }
})
