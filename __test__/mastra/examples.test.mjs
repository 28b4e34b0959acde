// The README's Mastra examples run as written in a fresh project, with their relative paths.
import test from 'node:test'
import * as fs from 'node:fs'
import { createRequire } from 'node:module'

const { freshProject, examples, ownedBy } = createRequire(import.meta.url)('../examples.js')

for (const example of examples.filter((e) => e.mastra)) {
  test(`examples/${example.file}${example.also ? ` then ${example.also}` : ''} run as written in a fresh project`, async () => {
    const project = freshProject()
    try {
      await example.run(process.execPath, project)
    } finally {
      for (const pid of ownedBy(project)) process.kill(pid, 'SIGKILL')
      fs.rmSync(project.dir, { recursive: true, force: true })
    }
  })
}
