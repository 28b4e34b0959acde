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

  it('a clone of a persistent sandbox needs its own id too', () => {
    const sb = new NativeLocalSandbox({ id: 'agent-options', workingDirectory: path.join(tmp, 'ws2'), persistent: true })
    assert.throws(() => sb.clone(), namesId)
    const other = sb.clone({ id: 'agent-options-2' })
    assert.equal(other.persistent, true)
    assert.equal(other.id, 'agent-options-2')
  })
})
