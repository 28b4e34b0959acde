// Sandbox options refused before anything starts: a persistent sandbox without an id would start a
// supervisor under a generated id that no later start() could find again.
import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import * as fs from 'node:fs'
import * as path from 'node:path'
import { createRequire } from 'node:module'
import { NativeLocalSandbox } from 'procvisor/mastra'
import { InvalidProcessOptionError } from 'procvisor'
import { tempDir } from './helpers.mjs'

const { pidsWith } = createRequire(import.meta.url)('../helpers.js')

let tmp
let runtime
let savedRuntime
const started = []
before(() => {
  tmp = tempDir('procvisor-sandbox-options-')
  // A private socket directory: whatever a start leaves there is this test's.
  runtime = path.join(tmp, 'runtime')
  fs.mkdirSync(runtime, { mode: 0o700 })
  savedRuntime = process.env.XDG_RUNTIME_DIR
  process.env.XDG_RUNTIME_DIR = runtime
})
after(async () => {
  for (const sb of started) await sb.destroy().catch(() => {})
  if (savedRuntime === undefined) delete process.env.XDG_RUNTIME_DIR
  else process.env.XDG_RUNTIME_DIR = savedRuntime
  fs.rmSync(tmp, { recursive: true, force: true })
})

const namesId = (e) => e instanceof InvalidProcessOptionError && e.code === 'INVALID_PROCESS_OPTION' && /^invalid option id: persistent: true needs an id/.test(e.message)

describe('persistent sandbox options', { timeout: 30000 }, () => {
  it('persistent: true without an id is refused, and no supervisor starts', async () => {
    const wd = path.join(tmp, 'ws')
    for (const id of [undefined, null, '']) {
      // As a program would use it: construct, then start.
      const attempt = async () => {
        const sb = new NativeLocalSandbox({ ...(id !== undefined && { id }), workingDirectory: wd, persistent: true })
        started.push(sb)
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
    const sb = new NativeLocalSandbox({ id: 'agent-options', workingDirectory: path.join(tmp, 'ws2'), persistent: true })
    const other = sb.clone({ id: 'agent-options-2' })
    assert.equal(other.persistent, true)
    assert.equal(other.id, 'agent-options-2')
    // As Mastra's clone() gets an id of its own: here `<id>-<8 hex>`, a new one each time.
    const a = sb.clone()
    const b = sb.clone({ workingDirectory: path.join(tmp, 'ws3') })
    assert.match(a.id, /^agent-options-[0-9a-f]{8}$/)
    assert.notEqual(a.id, b.id)
    assert.equal(a.persistent, true)
    const long = new NativeLocalSandbox({ id: 'x'.repeat(128), workingDirectory: path.join(tmp, 'ws4'), persistent: true })
    assert.equal(long.clone().id.length, 128, 'within the 128 characters of an id')
  })
})
