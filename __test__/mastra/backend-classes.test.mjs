// One set of faces over both procvisor backends: what a program holds of a sandbox (its
// managers, handles, nativeHandle, terminals) is an object of the same class whether the
// processes run in this Node process or under a persistent sandbox's supervisor, and no module
// exports a class that mirrors another backend's.
import { after, it } from 'node:test'
import assert from 'node:assert/strict'
import * as fs from 'node:fs'
import * as path from 'node:path'
import { createRequire } from 'node:module'
import * as procvisor from 'procvisor'
import * as mastra from 'procvisor/mastra'
import { BACKENDS, end } from './backends.mjs'
import { tempDir } from './helpers.mjs'

const require = createRequire(import.meta.url)
const ROOT = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../..')
const made = []
after(async () => {
  for (const sb of made) await end(sb)
})

/** The class of each object a program reaches in a started sandbox of `backend`. */
async function classesOf(backend) {
  const sb = backend.make({ workingDirectory: tempDir('procvisor-classes-') })
  made.push(sb)
  await sb.start()
  const handle = await sb.processes.spawn('sleep 30')
  const terminal = await sb.terminals.create({ command: 'sleep 30' })
  const got = {
    processes: sb.processes.constructor,
    handle: handle.constructor,
    'handle.nativeHandle': handle.nativeHandle.constructor,
    'processes.get()': (await sb.processes.get(handle.pid)).constructor,
    terminals: sb.terminals.constructor,
    terminal: terminal.constructor,
    'terminals.get()': (await sb.terminals.get(terminal.id)).constructor,
    checkpoints: sb.checkpoints.constructor,
  }
  await handle.kill()
  await terminal.terminate()
  return got
}

/** Every class a module of lib/ or mastra/ exports, as `file: Name`. */
function exportedClasses() {
  const out = []
  const walk = (dir) => {
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      const file = path.join(dir, e.name)
      if (e.isDirectory()) {
        if (e.name !== 'assets') walk(file)
        continue
      }
      // The supervisor is a program, run as one, not a module to require.
      if (!e.name.endsWith('.js') || file.endsWith(path.join('server', 'supervisor.js'))) continue
      for (const [name, v] of Object.entries(require(file))) {
        if (typeof v === 'function' && /^class\b/.test(Function.prototype.toString.call(v))) out.push(`${path.relative(ROOT, file)}: ${name}`)
      }
    }
  }
  walk(path.join(ROOT, 'lib'))
  walk(path.join(ROOT, 'mastra'))
  return out
}

it('a sandbox hands out objects of the same classes on both procvisor backends', async () => {
  const [native, persistent] = await Promise.all(BACKENDS.filter((b) => b.native).map(classesOf))
  for (const [what, Class] of Object.entries(native)) assert.equal(persistent[what], Class, `${what}: ${Class.name} here, ${persistent[what].name} in a persistent sandbox`)
  assert.equal(native.handle, mastra.NativeProcessHandle)
  assert.equal(native['handle.nativeHandle'], procvisor.ProcessHandle)
  assert.equal(native.terminal, procvisor.Terminal)
})

it('both process backends answer the one interface, and nothing beside it', () => {
  const { local, remote, CALLS } = require(path.join(ROOT, 'mastra/backends/index.js'))
  for (const [name, backend] of Object.entries({ local, remote })) {
    assert.deepEqual(Object.keys(backend).sort(), [...CALLS].sort(), name)
    for (const call of CALLS) assert.equal(typeof backend[call], 'function', `${name}.${call}`)
  }
})

it('no module exports a class that mirrors the other backend', () => {
  const classes = exportedClasses()
  assert.ok(classes.length > 10, classes.join('\n'))
  const twins = classes.filter((c) => /: (Remote|Local)[A-Z]\w*(Process|View|Terminal|Handle)\w*$/.test(c))
  assert.deepEqual(twins, [])
  // The transport of the socket backend is the one class of its kind: the other backend's
  // counterpart is the process core itself.
  assert.deepEqual(
    classes.filter((c) => /Port$/.test(c)),
    ['lib/persistent/client/port.js: SocketPort'],
  )
})
