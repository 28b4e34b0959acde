#!/usr/bin/env node
'use strict'
// `npm run test:install`: procvisor as a user gets it. The two tarballs of `npm run package` are
// installed with the registry's @mastra/core into a fresh project under the OS temp directory,
// then applications in both module systems, TypeScript and a Mastra workspace run real processes
// there. Nothing of the checkout is installed or loaded: the consumers prove it from their module
// paths and memory maps, and this runner from the project's symlinks and lockfile.
//
// Prints `ok` / `not ok` lines and `N passed, N failed`; exits 1 on any failure.
// PROCVISOR_KEEP_INSTALL_DIR=1 keeps the temporary project for inspection.
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { spawnSync } = require('node:child_process')
const { EXAMPLES, exampleFiles, examples, ownedBy } = require('../examples.js')

const started = Date.now()
const CHECKOUT = fs.realpathSync(path.join(__dirname, '..', '..'))
const CHECKOUT_AS_GIVEN = path.resolve(__dirname, '..', '..')
const namesCheckout = (s) => String(s).includes(CHECKOUT) || String(s).includes(CHECKOUT_AS_GIVEN)
const pkg = readJson(path.join(CHECKOUT, 'package.json'))
const PLATFORM = hostPlatform() // the one platform package `npm run package` can build here
const PLATFORM_PKG = `procvisor-${PLATFORM}`
const BINARY = `procvisor.${PLATFORM}.node`
/** The files procvisor's typings entry (index.d.ts) re-exports. */
const TYPINGS = fs.readdirSync(path.join(CHECKOUT, 'types')).filter((f) => f.endsWith('.d.ts')).map((f) => `types/${f}`)
const tarballs = [`procvisor-${pkg.version}.tgz`, `${PLATFORM_PKG}-${pkg.version}.tgz`]
const platformNames = fs
  .readdirSync(path.join(CHECKOUT, 'npm'))
  .map((d) => readJson(path.join(CHECKOUT, 'npm', d, 'package.json')).name)
  .sort()

let passed = 0
let failed = 0
function ok(name) {
  passed++
  console.log(`ok - ${name}`)
}
function notOk(name, why) {
  failed++
  console.log(`not ok - ${name}: ${String(why).split('\n').join('\n    ')}`)
}
function check(name, fn) {
  try {
    const detail = fn()
    ok(detail ? `${name}: ${detail}` : name)
    return true
  } catch (err) {
    notOk(name, err && err.message ? err.message : err)
    return false
  }
}
function assert(cond, message) {
  if (!cond) throw new Error(message)
}

// What the children see: nothing that names the checkout (`npm run` exports INIT_CWD,
// npm_package_json and npm_config_local_prefix pointing at it, and puts its node_modules/.bin,
// with tsc and napi, on PATH), nothing describing the running script, no NODE_PATH/NODE_OPTIONS.
// npm's own settings (registry, cache, CA file) pass through.
const env = {}
for (const [k, v] of Object.entries(process.env)) {
  if (k === 'PATH' || /^npm_(package|lifecycle)_|^npm_(command|execpath|node_execpath)$/i.test(k)) continue
  if (['NODE_PATH', 'NODE_OPTIONS'].includes(k) || k.startsWith('NAPI_RS_') || namesCheckout(v)) continue
  env[k] = v
}
env.PATH = (process.env.PATH || '')
  .split(path.delimiter)
  .filter((d) => d && !namesCheckout(path.resolve(d)))
  .join(path.delimiter)

const tmp = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'procvisor-install-')))
main()
  .catch((err) => notOk('the install test itself', err && err.stack))
  .finally(() => {
    if (process.env.PROCVISOR_KEEP_INSTALL_DIR) console.log(`# kept ${tmp}`)
    else fs.rmSync(tmp, { recursive: true, force: true })
    console.log(`# test:install took ${((Date.now() - started) / 1000).toFixed(1)} s`)
    console.log(`${passed} passed, ${failed} failed`)
    process.exitCode = failed ? 1 : 0
  })

async function main() {
  console.log(`# temporary project: ${tmp}`)
  const ready = check('the two tarballs exist in dist/', () => {
    for (const t of tarballs) assert(fs.existsSync(path.join(CHECKOUT, 'dist', t)), `dist/${t} is missing: run npm run package`)
    fs.mkdirSync(path.join(tmp, 'tarballs'))
    for (const t of tarballs) fs.copyFileSync(path.join(CHECKOUT, 'dist', t), path.join(tmp, 'tarballs', t))
    return tarballs.map((t) => `${t} ${kb(fs.statSync(path.join(tmp, 'tarballs', t)).size)}`).join(', ')
  })
  if (!ready) return

  const init = check('npm init -y', () => {
    sh('npm', ['init', '-y'])
  })
  const mastraVersion = pkg.devDependencies['@mastra/core']
  const installed =
    init &&
    check(`npm install <both tarballs> @mastra/core@${mastraVersion}`, () => {
      const t = Date.now()
      sh('npm', ['install', ...tarballs.map((f) => `./tarballs/${f}`), `@mastra/core@${mastraVersion}`, '--no-audit', '--no-fund'], { timeout: 600_000 })
      return `${((Date.now() - t) / 1000).toFixed(1)} s`
    })
  if (!installed) return
  const tsReady = check(`npm install -D typescript@${pkg.devDependencies.typescript} @types/node@${pkg.devDependencies['@types/node']}`, () => {
    sh('npm', ['install', '-D', `typescript@${pkg.devDependencies.typescript}`, `@types/node@${pkg.devDependencies['@types/node']}`, '--no-audit', '--no-fund'], {
      timeout: 600_000,
    })
  })

  const nm = path.join(tmp, 'node_modules')
  const mainDir = path.join(nm, 'procvisor')
  const platDir = path.join(nm, PLATFORM_PKG)
  check('node_modules/procvisor is a real directory holding the published files only', () => {
    assert(fs.lstatSync(mainDir).isDirectory(), 'not a directory (a link?)')
    const files = walk(mainDir).map((f) => path.relative(mainDir, f))
    const stray = files.filter((f) => /^(src|__test__|bench|soak|demo|docs|scripts|npm|target|dist)\//.test(f) || f.endsWith('.node') || /^Cargo\./.test(f))
    assert(stray.length === 0, `unexpected files: ${stray.join(', ')}`)
    for (const f of ['index.js', 'index.mjs', 'index.d.ts', 'binding.js', 'lib/native/native.js', 'mastra/index.js', 'mastra/index.mjs', 'mastra/index.d.ts', ...TYPINGS]) assert(files.includes(f), `${f} is missing`)
    return `${files.length} files`
  })
  check(`procvisor's optionalDependencies name all ${platformNames.length} platform packages at ${pkg.version}`, () => {
    const opt = readJson(path.join(mainDir, 'package.json')).optionalDependencies || {}
    assert(JSON.stringify(Object.keys(opt).sort()) === JSON.stringify(platformNames), `got ${JSON.stringify(opt)}`)
    for (const [name, v] of Object.entries(opt)) assert(v === pkg.version, `${name} is at ${v}`)
  })
  check(`${PLATFORM_PKG} is installed with its ${BINARY}`, () => {
    assert(fs.lstatSync(platDir).isDirectory(), 'not a directory')
    const bin = fs.readFileSync(path.join(platDir, BINARY))
    assert(bin.subarray(0, 4).toString('latin1') === '\x7fELF', 'not an ELF shared object')
    assert(readJson(path.join(platDir, 'package.json')).version === pkg.version, 'wrong version')
  })
  check('no symlink under the project points into the checkout', () => {
    let links = 0
    for (const f of walk(tmp)) {
      if (!fs.lstatSync(f).isSymbolicLink()) continue
      links++
      const target = path.resolve(path.dirname(f), fs.readlinkSync(f))
      assert(!inside(target, CHECKOUT), `${f} -> ${target}`)
      let real
      try {
        real = fs.realpathSync(f)
      } catch {
        continue // a dangling link reads nothing
      }
      assert(!inside(real, CHECKOUT), `${f} resolves to ${real}`)
    }
    return `${links} symlinks checked`
  })
  check('the lockfile installs procvisor from the tarballs, not from a link or the checkout', () => {
    const lock = fs.readFileSync(path.join(tmp, 'package-lock.json'), 'utf8')
    assert(!lock.includes(CHECKOUT), 'the lockfile names the checkout')
    const pkgs = JSON.parse(lock).packages
    for (const name of ['procvisor', PLATFORM_PKG]) {
      const entry = pkgs[`node_modules/${name}`]
      assert(entry && !entry.link, `${name}: ${JSON.stringify(entry)}`)
      assert(/^file:tarballs\//.test(entry.resolved), `${name} resolved from ${entry.resolved}`)
    }
  })
  const sizes = [mainDir, platDir].map((d) => `${path.relative(tmp, d)} ${du(d)}`)
  console.log(`# installed size: ${sizes.join(', ')}`)

  const node22 = findNode22()
  const nodes = [process.execPath, node22].filter((n, i, all) => n && all.indexOf(n) === i)
  if (!node22) notOk('Node >= 22.13 for @mastra/core', 'npx -p node@22 did not give one')

  for (const f of fs.readdirSync(path.join(__dirname, 'consumer'))) fs.copyFileSync(path.join(__dirname, 'consumer', f), path.join(tmp, f))
  for (const node of nodes) {
    consumer(node, 'consumer.cjs')
    consumer(node, 'consumer.mjs')
  }
  if (node22) consumer(node22, 'mastra.mjs')
  check('the procvisor command is installed: node_modules/.bin/procvisor --help, and ls --json', () => {
    const bin = path.join(tmp, 'node_modules', '.bin', 'procvisor')
    const help = spawnSync(bin, ['--help'], { cwd: tmp, env, encoding: 'utf8' })
    assert(help.status === 0 && /procvisor ls/.test(help.stdout), `--help: status ${help.status}, ${help.stderr}`)
    const ls = spawnSync(bin, ['ls', '--json'], { cwd: tmp, env, encoding: 'utf8' })
    assert(ls.status === 0 && Array.isArray(JSON.parse(ls.stdout)), `ls --json: status ${ls.status}, ${ls.stderr}`)
    const usage = spawnSync(bin, ['frob'], { cwd: tmp, env, encoding: 'utf8' })
    assert(usage.status === 2, `a usage error exits ${usage.status}`)
  })
  for (const node of nodes) await readmeExamples(node, node === node22)

  if (tsReady && node22) {
    const tsc = path.join(nm, 'typescript', 'bin', 'tsc')
    // Mastra's own typings do not compile without skipLibCheck (hundreds of errors in its bundled
    // AI SDK and zod types), so an application builds with it, as this one does. That would skip
    // procvisor's .d.ts files too; the second run checks everything and keeps only the diagnostics
    // in procvisor's typings and the consumer.
    const compiled = check('tsc --strict (skipLibCheck, as a Mastra app builds) compiles a consumer of the installed typings', () => {
      sh(node22, [tsc, '--strict', '-p', 'tsconfig.json'])
    })
    check("tsc --strict without skipLibCheck: no error in procvisor's typings or the consumer", () => {
      const r = spawnSync(node22, [tsc, '--strict', '-p', 'tsconfig.json', '--skipLibCheck', 'false', '--noEmit', '--listFiles'], {
        cwd: tmp,
        env,
        encoding: 'utf8',
        timeout: 300_000,
        maxBuffer: 64 * 1024 * 1024,
      })
      const lines = (r.stdout || '').split('\n')
      const errors = lines.filter((l) => / error TS\d+:/.test(l))
      const ours = errors.filter((l) => /^(consumer\.ts|node_modules\/procvisor\/)/.test(l))
      assert(r.status === 0 || r.status === 2, `tsc: ${r.error ? r.error.message : `exit ${r.status ?? r.signal}`}\n${(r.stderr || '').slice(-2000)}`)
      assert(ours.length === 0, ours.join('\n'))
      const files = lines.filter((l) => l.startsWith('/'))
      const typings = files.filter((f) => inside(f, mainDir))
      for (const f of ['index.d.ts', ...TYPINGS, 'mastra/index.d.ts']) assert(typings.includes(path.join(mainDir, f)), `${f} was not part of the program`)
      const outside = files.filter((f) => !inside(f, tmp))
      assert(outside.length === 0, `files from outside the project: ${outside.join(', ')}`)
      return `${typings.length} procvisor typings checked, all from node_modules/procvisor; ${errors.length} errors inside other packages' typings ignored`
    })
    if (compiled) {
      check('the compiled TypeScript consumer runs with the results its types promise', () => {
        const out = JSON.parse(sh(node22, ['ts-out/consumer.js']).trim().split('\n').pop())
        const want = { exitCode: 4, stdout: 'hi typed\n', out: 'ok', bytes: 0, cwdError: 'INVALID_PROCESS_CWD', live: 0, sandbox: 'NativeLocalSandbox' }
        for (const [k, v] of Object.entries(want)) assert(out[k] === v, `${k}: got ${JSON.stringify(out[k])}, want ${JSON.stringify(v)}`)
        assert(/^\d+$/.test(out.pid), `pid ${out.pid}`)
      })
    }
  }

  missingBinary(platDir)
}

/** Runs one consumer and counts its `ok` / `not ok` lines; a crash or a silent exit is a failure. */
function consumer(node, file) {
  const version = sh(node, ['-p', 'process.versions.node']).trim()
  const r = spawnSync(node, [file], {
    cwd: tmp,
    env: { ...env, INSTALL_ROOT: tmp, CHECKOUT, CONSUMER: file, PLATFORM },
    encoding: 'utf8',
    timeout: 120_000,
  })
  let lines = 0
  for (const line of (r.stdout || '').split('\n')) {
    if (line.startsWith('ok - ')) ok(line.slice(5))
    else if (line.startsWith('not ok - ')) notOk(line.slice(9), '')
    else continue
    lines++
  }
  if (r.status !== 0 || lines === 0) notOk(`${file} on Node ${version} exited cleanly`, `status ${r.status ?? r.signal}${r.error ? ` (${r.error.message})` : ''}\n${(r.stderr || '').slice(-2000)}`)
}

/**
 * The README's examples, copied into a folder of the project and run there as written (the ones
 * that need @mastra/core only on Node 22).
 */
async function readmeExamples(node, withMastra) {
  const version = sh(node, ['-p', 'process.versions.node']).trim()
  const dir = path.join(tmp, `examples-${version}`)
  fs.mkdirSync(dir)
  for (const f of exampleFiles()) fs.copyFileSync(path.join(EXAMPLES, f), path.join(dir, f))
  const runtime = path.join(dir, '.runtime')
  fs.mkdirSync(runtime, { mode: 0o700 })
  const project = { dir, env: { ...env, XDG_RUNTIME_DIR: runtime } }
  for (const example of examples.filter((e) => withMastra || !e.mastra)) {
    const name = `README example ${example.file}${example.also ? ` then ${example.also}` : ''} on Node ${version}`
    try {
      await example.run(node, project)
      ok(name)
    } catch (err) {
      notOk(name, err && err.message)
    } finally {
      for (const pid of ownedBy(project)) process.kill(pid, 'SIGKILL')
    }
  }
}

/** With the platform package (or only its .node file) gone, loading says what is missing and what to do. */
function missingBinary(platDir) {
  const hidden = path.join(tmp, 'hidden')
  fs.mkdirSync(hidden)
  const variants = [
    ['the platform package is not installed', platDir, path.join(hidden, PLATFORM_PKG)],
    [`the platform package has no ${BINARY}`, path.join(platDir, BINARY), path.join(hidden, BINARY)],
  ]
  for (const [what, from, to] of variants) {
    fs.renameSync(from, to)
    try {
      for (const how of ['require', 'import']) {
        check(`${what}: ${how} throws an Error naming ${PLATFORM}, ${PLATFORM_PKG} and the build from source`, () => {
          const out = JSON.parse(sh(process.execPath, ['missing-binary.cjs', how]).trim())
          assert(out.loaded === false, 'procvisor loaded')
          assert(out.isError, 'not an Error')
          assert(out.code !== 'MODULE_NOT_FOUND' && !/^Cannot find module/.test(out.message), `a bare module error: ${out.message}`)
          for (const needle of [PLATFORM, PLATFORM_PKG, 'npm run build', 'cargo', 'git']) assert(out.message.includes(needle), `no "${needle}" in: ${out.message}`)
        })
      }
    } finally {
      fs.renameSync(to, from)
    }
  }
  check('with the platform package back, procvisor loads again', () => {
    assert(JSON.parse(sh(process.execPath, ['missing-binary.cjs', 'require']).trim()).loaded === true, 'it did not load')
  })
}

/** Node >= 22.13: this one when recent enough, else the registry's node@22 through npx (as scripts/node22.js). */
function findNode22() {
  const [major, minor] = process.versions.node.split('.').map(Number)
  if (major > 22 || (major === 22 && minor >= 13)) return process.execPath
  try {
    return sh('npx', ['-y', '-p', 'node@22', 'node', '-p', 'process.execPath'], { timeout: 300_000 }).trim()
  } catch {
    return null
  }
}

/** Runs a command in the temporary project; returns stdout, throws with its output on failure. */
function sh(cmd, args, { timeout = 120_000 } = {}) {
  const r = spawnSync(cmd, args, { cwd: tmp, env, encoding: 'utf8', timeout, maxBuffer: 64 * 1024 * 1024 })
  if (r.status !== 0) {
    throw new Error(`${path.basename(cmd)} ${args.join(' ')}: ${r.error ? r.error.message : `exit ${r.status ?? r.signal}`}\n${`${r.stdout || ''}${r.stderr || ''}`.slice(-3000)}`)
  }
  return r.stdout
}

/** Every non-directory entry under `dir`, symlinks included (never followed). */
function walk(dir) {
  const out = []
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const f = path.join(dir, e.name)
    if (e.isDirectory()) out.push(...walk(f))
    else out.push(f)
  }
  return out
}

/** Apparent size of the files and what `du` says the directory takes on disk. */
function du(dir) {
  const bytes = walk(dir).reduce((n, f) => n + fs.lstatSync(f).size, 0)
  const r = spawnSync('du', ['-sk', dir], { encoding: 'utf8' })
  const disk = r.status === 0 ? ` (du: ${r.stdout.split(/\s/)[0]} KB on disk)` : ''
  return `${kb(bytes)}${disk}`
}

/** napi's platform name for this machine (linux-x64-gnu, darwin-arm64, ...). */
function hostPlatform() {
  if (process.platform !== 'linux') return `${process.platform}-${process.arch}`
  process.report.excludeNetwork = true
  return `linux-${process.arch}-${process.report.getReport().header.glibcVersionRuntime ? 'gnu' : 'musl'}`
}

function inside(file, dir) {
  return file === dir || file.startsWith(dir + path.sep)
}

function readJson(file) {
  return JSON.parse(fs.readFileSync(file, 'utf8'))
}

function kb(n) {
  return n >= 1024 * 1024 ? `${(n / 1024 / 1024).toFixed(2)} MB` : `${(n / 1024).toFixed(1)} KB`
}
