'use strict'
// What an editor shows for the typings: every exported declaration of procvisor's typings (index.d.ts
// and the files under types/ it re-exports) and of procvisor/mastra's has one doc comment, its own
// (a comment left above another declaration documents that one).
const test = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const ts = require('typescript')

const ROOT = path.join(__dirname, '..')
/** Every declaration file of both entries, relative to the package root. */
const TYPINGS = [
  'index.d.ts',
  ...fs.readdirSync(path.join(ROOT, 'types')).filter((f) => f.endsWith('.d.ts')).map((f) => `types/${f}`),
  'mastra/index.d.ts',
  'mastra/options.d.ts',
]

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

test('types/options.d.ts: the resource limits are documented on ProcessLimits, the terminal on TerminalOptions', () => {
  const d = docs(path.join(ROOT, 'types/options.d.ts'))
  assert.equal(d.get('ProcessLimits').length, 1, 'ProcessLimits has one doc comment')
  assert.match(d.get('ProcessLimits')[0], /^Per-process resource limits/)
  assert.deepEqual(d.get('TerminalOptions').length, 1, `TerminalOptions has one doc comment, not ${JSON.stringify(d.get('TerminalOptions'))}`)
  assert.match(d.get('TerminalOptions')[0], /terminal/)
})

test('no declaration of the typings carries two doc comments', () => {
  assert.ok(TYPINGS.length > 4, `the typings under types/ were found: ${TYPINGS}`)
  for (const file of TYPINGS) {
    for (const [name, comments] of docs(path.join(ROOT, file))) {
      assert.ok(comments.length <= 1, `${file}: ${name} has ${comments.length} doc comments: ${JSON.stringify(comments)}`)
    }
  }
})
