'use strict'
// The README's examples: each JavaScript block is a file of examples/, and each runs as written.
const test = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const { EXAMPLES, exampleFiles, documentedBlocks, freshProject, examples } = require('./examples.js')

test('every JavaScript block of the README and docs is a file of examples/, word for word', () => {
  const blocks = documentedBlocks()
  assert.ok(blocks.length >= 5, `found ${blocks.length} blocks`)
  for (const b of blocks) {
    assert.ok(b.name, `${b.where}: a block that does not start with "// examples/<file>" (put it in examples/ so it runs)`)
    const file = path.join(EXAMPLES, b.name)
    assert.ok(fs.existsSync(file), `${b.where}: examples/${b.name} does not exist`)
    assert.equal(b.code, fs.readFileSync(file, 'utf8'), `${b.where}: differs from examples/${b.name}`)
  }
  const shown = new Set(blocks.map((b) => b.name))
  for (const f of exampleFiles()) assert.ok(shown.has(f), `examples/${f} is shown nowhere in the README or docs`)
})

test('every example is run by a test', () => {
  const run = new Set(examples.flatMap((e) => [e.file, e.also].filter(Boolean)))
  assert.deepEqual([...run].sort(), exampleFiles().sort())
})

// The examples that need no @mastra/core run on this Node (20 and 22); the Mastra ones run in the
// Mastra suite, on Node 22.
for (const example of examples.filter((e) => !e.mastra)) {
  test(`examples/${example.file} runs as written in a fresh project`, async () => {
    const project = freshProject()
    try {
      await example.run(process.execPath, project)
    } finally {
      fs.rmSync(project.dir, { recursive: true, force: true })
    }
  })
}
