// Sandbox options refused before anything starts: a persistent sandbox without an id would start a
// supervisor under a generated id that no later start() could find again.
import { it } from 'node:test'
import assert from 'node:assert/strict'
import * as fs from 'node:fs'
import * as path from 'node:path'
import { createRequire } from 'node:module'
import { InvalidProcessOptionError } from 'procvisor'
import { describeBackends, perTest, privateSockets } from './backends.mjs'

const { pidsWith } = createRequire(import.meta.url)('../helpers.js')

// A private socket directory: whatever a start leaves there is this file's.
const runtime = privateSockets()

const namesId = (e) => e instanceof InvalidProcessOptionError && e.code === 'INVALID_PROCESS_OPTION' && /^invalid option id: persistent: true needs an id/.test(e.message)

// Only a persistent sandbox needs an id that a later start() can find again, and only its clone
// derives one.
describeBackends('persistent sandbox options', ['persistent'], { timeout: 30000 }, (backend) => {
  const each = perTest(backend, { prefix: 'procvisor-sandbox-options-' })

  it('persistent: true without an id is refused, and no supervisor starts', async () => {
    const wd = path.join(each.dir, 'ws')
    for (const id of [undefined, null, '']) {
      // As a program would use it: construct, then start. (The fixture's fresh id is taken away.)
      const attempt = async () => {
        const sb = each.make({ id, workingDirectory: wd })
        await sb.start()
      }
      await assert.rejects(attempt, namesId, `id ${JSON.stringify(id)}`)
    }
    assert.deepEqual(pidsWith(wd), [], 'no supervisor process')
    const sockets = fs.existsSync(path.join(runtime, 'procvisor')) ? fs.readdirSync(path.join(runtime, 'procvisor')) : []
    assert.deepEqual(sockets, [], 'no socket, no supervisor log')
    assert.equal(fs.existsSync(wd), false, 'not even the working directory')
  })

  it('a clone of a persistent sandbox takes the id given, else one derived from the template\'s', () => {
    const sb = each.make({ id: 'agent-options', workingDirectory: path.join(each.dir, 'ws2') })
    const other = sb.clone({ id: 'agent-options-2' })
    assert.equal(other.persistent, true)
    assert.equal(other.id, 'agent-options-2')
    // As Mastra's clone() gets an id of its own: here `<id>-<8 hex>`, a new one each time.
    const a = sb.clone()
    const b = sb.clone({ workingDirectory: path.join(each.dir, 'ws3') })
    assert.match(a.id, /^agent-options-[0-9a-f]{8}$/)
    assert.notEqual(a.id, b.id)
    assert.equal(a.persistent, true)
    const long = each.make({ id: 'x'.repeat(128), workingDirectory: path.join(each.dir, 'ws4') })
    assert.equal(long.clone().id.length, 128, 'within the 128 characters of an id')
  })
})
