// procvisor installed from a folder (`npm install /path/to/a/clone`, which npm links) next to the
// application's own @mastra/core: Node resolves procvisor's imports from the clone's real path,
// where the application's packages are not. procvisor/mastra must still find, and extend, the
// application's @mastra/core, from both module systems, from the working directory or the main
// module's place.
import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import * as fs from 'node:fs'
import * as path from 'node:path'
import { ROOT, tempDir } from './helpers.mjs'

const PACKAGE_FILES = ['package.json', 'index.js', 'index.mjs', 'mastra', 'binding.js', 'lib']
let tmp

/** A clone of procvisor as its files are (no node_modules of its own, or the ones given). */
function makeClone(dir, ownModules = {}) {
  fs.mkdirSync(dir, { recursive: true })
  for (const f of PACKAGE_FILES) fs.cpSync(path.join(ROOT, f), path.join(dir, f), { recursive: true })
  for (const f of fs.readdirSync(ROOT).filter((n) => n.endsWith('.node'))) {
    try {
      fs.linkSync(path.join(ROOT, f), path.join(dir, f))
    } catch {
      fs.copyFileSync(path.join(ROOT, f), path.join(dir, f))
    }
  }
  for (const [name, files] of Object.entries(ownModules)) {
    const pkg = path.join(dir, 'node_modules', name)
    fs.mkdirSync(pkg, { recursive: true })
    for (const [file, text] of Object.entries(files)) fs.writeFileSync(path.join(pkg, file), text)
  }
  return dir
}

/** An application whose node_modules links procvisor to `clone` and @mastra/core to the real one. */
function makeApp(dir, clone) {
  fs.mkdirSync(path.join(dir, 'node_modules', '@mastra'), { recursive: true })
  fs.writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name: 'app', private: true }))
  fs.symlinkSync(clone, path.join(dir, 'node_modules', 'procvisor'), 'dir')
  fs.symlinkSync(path.join(ROOT, 'node_modules', '@mastra', 'core'), path.join(dir, 'node_modules', '@mastra', 'core'), 'dir')
  return dir
}

function node(args, cwd) {
  const env = { ...process.env }
  for (const k of ['NODE_OPTIONS', 'NODE_PATH', 'NODE_TEST_CONTEXT', 'NODE_PRESERVE_SYMLINKS']) delete env[k]
  try {
    return execFileSync(process.execPath, args, { cwd, env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 60_000 }).trim()
  } catch (e) {
    assert.fail(`node ${args.join(' ')} failed in ${cwd}:\n${e.stderr || e.message}`)
  }
}

// Each program prints whether procvisor's sandbox is the application's LocalSandbox, where that
// class was loaded from, and the output of a command run through it.
const CJS = `
const { NativeLocalSandbox } = require('procvisor/mastra')
const { LocalSandbox } = require('@mastra/core/workspace')
const sb = new NativeLocalSandbox({ workingDirectory: process.argv.at(-1) })
sb.executeCommand('echo', ['ran']).then((r) => {
  console.log(JSON.stringify({ extendsApp: sb instanceof LocalSandbox, core: require.resolve('@mastra/core/workspace'), out: r.stdout.trim() }))
  return sb.destroy()
})`
const ESM = `
import { NativeLocalSandbox } from 'procvisor/mastra'
import { LocalSandbox } from '@mastra/core/workspace'
const sb = new NativeLocalSandbox({ workingDirectory: process.argv.at(-1) })
const r = await sb.executeCommand('echo', ['ran'])
console.log(JSON.stringify({ extendsApp: sb instanceof LocalSandbox, core: import.meta.resolve('@mastra/core/workspace'), out: r.stdout.trim() }))
await sb.destroy()`

function assertAppsMastra(printed) {
  const r = JSON.parse(printed)
  assert.equal(r.extendsApp, true, `procvisor's sandbox does not extend the application's LocalSandbox: ${printed}`)
  assert.equal(r.out, 'ran')
}

before(() => {
  tmp = tempDir('procvisor-linked-')
})
after(() => fs.rmSync(tmp, { recursive: true, force: true }))

describe('a clone without node_modules, linked into the application', () => {
  let app
  before(() => {
    app = makeApp(path.join(tmp, 'app'), makeClone(path.join(tmp, 'clone')))
  })

  it('require(procvisor/mastra) from the application finds its @mastra/core', () => {
    assertAppsMastra(node(['-e', CJS, path.join(tmp, 'wd-cjs')], app))
  })

  it('import from procvisor/mastra finds its ES module build', () => {
    assertAppsMastra(node(['--input-type=module', '-e', ESM, path.join(tmp, 'wd-esm')], app))
  })

  it('from the main module of the application when the working directory is elsewhere', () => {
    fs.writeFileSync(path.join(app, 'main.cjs'), CJS)
    assertAppsMastra(node([path.join(app, 'main.cjs'), path.join(tmp, 'wd-main')], tmp))
  })
})

describe('a clone with a @mastra/core of its own, linked into the application', () => {
  it("the application's @mastra/core is the one extended, not the clone's", () => {
    // The clone's copy is not Mastra at all: loading it is the failure.
    const notMastra = "throw new Error('the clone\\'s own @mastra/core was loaded')\n"
    const clone = makeClone(path.join(tmp, 'clone-own'), {
      '@mastra/core': {
        'package.json': JSON.stringify({ name: '@mastra/core', exports: { './workspace': { import: './w.mjs', require: './w.cjs' } } }),
        'w.cjs': notMastra,
        'w.mjs': notMastra,
      },
    })
    const app = makeApp(path.join(tmp, 'app-own'), clone)
    assertAppsMastra(node(['-e', CJS, path.join(tmp, 'wd-own-cjs')], app))
    assertAppsMastra(node(['--input-type=module', '-e', ESM, path.join(tmp, 'wd-own-esm')], app))
  })
})
