#!/usr/bin/env node
'use strict'
// `npm run package`: the tarballs a user installs, in dist/: the main package and this machine's
// platform package (the only one it can build), exactly as `npm publish` would ship them.
//
// Both are packed from a staging directory, never from the checkout: the checkout holds a debug
// addon and a binding.js from whatever was built last, and its package.json is the development one
// (scripts, devDependencies, the `procvisor.*.node` entry that only from-source installs need).
// The staged manifest gains the `optionalDependencies` that `napi prepublish` would add at publish
// time; they stay out of the checkout's package.json because `npm ci` would then look up six
// unpublished packages and the lockfile would never match.
//
// The release build writes into the staging directory (`--output-dir`), so a test run that has the
// checkout's `procvisor.*.node` loaded is never touched.
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { spawnSync } = require('node:child_process')

const root = path.join(__dirname, '..')
const dist = path.join(root, 'dist')
// The main tarball is JS, typings and the README (245 KB gzipped with the command line, the web
// view with its checkpoints, the agent tools with theirs, sandbox terminals, stacks of services
// with probes, named checkpoints, log files and the shared output); its budget catches a stray
// folder or a binary packed by mistake, which would cost hundreds of KB, not the growth of the
// code itself.
const BUDGET = { main: 288 * 1024, platform: 2 * 1024 * 1024 }

const pkg = readJson(path.join(root, 'package.json'))
const platform = hostPlatform()
const stage = fs.mkdtempSync(path.join(os.tmpdir(), 'procvisor-package-'))
try {
  packageAll()
} catch (err) {
  console.error(`package: ${err.message}`)
  process.exitCode = 1
} finally {
  fs.rmSync(stage, { recursive: true, force: true })
}

function packageAll() {
  const platformDirs = fs.readdirSync(path.join(root, 'npm')).filter((d) => fs.existsSync(path.join(root, 'npm', d, 'package.json')))
  const platformPkgs = platformDirs.map((d) => readJson(path.join(root, 'npm', d, 'package.json')))
  for (const p of platformPkgs) {
    if (p.version !== pkg.version) fail(`${p.name} is at ${p.version} but procvisor is at ${pkg.version}: bump npm/*/package.json together`)
  }
  if (!platformDirs.includes(platform)) fail(`this machine is ${platform}, which has no platform package in npm/`)

  const build = path.join(stage, 'build')
  const binary = `procvisor.${platform}.node`
  console.log(`== release build (${platform})`)
  run(process.execPath, [napiBin(), 'build', '--platform', '--release', '--output-dir', build, '--js', 'binding.js', '--dts', 'binding.d.ts'], root)
  for (const f of ['binding.js', 'binding.d.ts', binary]) {
    if (!fs.existsSync(path.join(build, f))) fail(`the build did not produce ${f}`)
  }

  // The main package: the `files` of package.json, with the freshly generated loader and typings.
  const main = path.join(stage, 'procvisor')
  fs.mkdirSync(main)
  const files = pkg.files.filter((f) => !f.endsWith('.node'))
  for (const f of files) {
    const from = ['binding.js', 'binding.d.ts'].includes(f) ? path.join(build, f) : path.join(root, f)
    if (!fs.existsSync(from)) fail(`${f} is listed in "files" but missing`)
    fs.cpSync(from, path.join(main, f), { recursive: true })
  }
  const { scripts, devDependencies, ...published } = pkg
  published.files = files
  published.optionalDependencies = Object.fromEntries(platformPkgs.map((p) => [p.name, pkg.version]).sort())
  fs.writeFileSync(path.join(main, 'package.json'), JSON.stringify(published, null, 2) + '\n')

  // The platform package: its manifest, its README and the binary its `main` names.
  const plat = path.join(stage, platform)
  fs.cpSync(path.join(root, 'npm', platform), plat, { recursive: true })
  const platPkg = readJson(path.join(plat, 'package.json'))
  if (platPkg.main !== binary) fail(`npm/${platform}/package.json has main ${platPkg.main}, expected ${binary}`)
  fs.copyFileSync(path.join(build, binary), path.join(plat, binary))

  fs.rmSync(dist, { recursive: true, force: true })
  fs.mkdirSync(dist)
  console.log('== pack')
  const mainTgz = pack(main)
  const platTgz = pack(plat)

  const listing = spawnSync('tar', ['tzf', platTgz], { encoding: 'utf8' }).stdout
  if (!listing.split('\n').includes(`package/${binary}`)) fail(`${path.basename(platTgz)} does not contain ${binary}`)

  let over = false
  for (const [kind, file] of [['main', mainTgz], ['platform', platTgz]]) {
    const size = fs.statSync(file).size
    const ok = size <= BUDGET[kind]
    over ||= !ok
    console.log(`${ok ? 'ok  ' : 'OVER'} ${path.relative(root, file)}: ${kb(size)} (budget ${kb(BUDGET[kind])})`)
  }
  if (over) fail('a tarball is over its size budget')
}

/** Packs `dir` into dist/ and prints what went in; returns the tarball's path. */
function pack(dir) {
  const r = spawnSync('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', dist], { cwd: dir, encoding: 'utf8' })
  if (r.status !== 0) fail(`npm pack failed in ${dir}:\n${r.stderr}`)
  const [info] = JSON.parse(r.stdout)
  console.log(`${info.filename}: ${info.entryCount} files, ${kb(info.unpackedSize)} unpacked`)
  for (const f of info.files) console.log(`  ${f.path}`)
  return path.join(dist, info.filename)
}

function napiBin() {
  const cli = path.dirname(require.resolve('@napi-rs/cli/package.json', { paths: [root] }))
  const { bin } = readJson(path.join(cli, 'package.json'))
  return path.join(cli, typeof bin === 'string' ? bin : bin.napi)
}

/** napi's platform name for this machine (linux-x64-gnu, darwin-arm64, ...). */
function hostPlatform() {
  if (process.platform !== 'linux') return `${process.platform}-${process.arch}`
  process.report.excludeNetwork = true
  const glibc = process.report.getReport().header.glibcVersionRuntime
  return `linux-${process.arch}-${glibc ? 'gnu' : 'musl'}`
}

function run(cmd, args, cwd) {
  const r = spawnSync(cmd, args, { cwd, stdio: 'inherit' })
  if (r.status !== 0) fail(`${path.basename(cmd)} ${args.join(' ')} exited with ${r.status ?? r.signal}`)
}

function readJson(file) {
  return JSON.parse(fs.readFileSync(file, 'utf8'))
}

function kb(n) {
  return `${(n / 1024).toFixed(1)} KB`
}

function fail(message) {
  throw new Error(message)
}
