#!/usr/bin/env node
'use strict'
// The `prepare` script: builds the release addon from source when procvisor is installed from a git
// URL or a local folder and no prebuilt binary can be found; skips everywhere else.
//
// npm runs `prepare` in these cases, and only the last two need a build:
//   - `npm install` / `npm ci` in this repository (a developer's or CI's own install), including
//     the one npm runs inside a git clone before packing it: INIT_CWD is this folder. Skipped:
//     `npm test` builds the debug addon itself, and a release build here would add a minute or more
//     to every clean install for a binary the tests do not use.
//   - npm packing this folder (a git dependency, `npm pack`, `npm install <folder> --install-links`):
//     npm sets npm_package_resolved. Built, so the tarball carries the binary.
//   - `npm install <folder>` from another project (a symlinked folder): INIT_CWD is that project.
//     Built in place, as `npm run build` would.
// Without cargo, the build cannot happen: the script says what is missing and fails, but only when
// no binary can be found at all (a folder that was already built installs fine without Rust).
const fs = require('node:fs')
const path = require('node:path')
const { spawnSync } = require('node:child_process')

const root = fs.realpathSync(path.join(__dirname, '..'))
const platform = hostPlatform()
const say = (line) => console.error(`procvisor: ${line}`)

const packing = Boolean(process.env.npm_package_resolved)
const initCwd = process.env.INIT_CWD && realpath(process.env.INIT_CWD)
const ownInstall = !packing && initCwd !== undefined && (initCwd === root || initCwd.startsWith(root + path.sep))

if (ownInstall) {
  if (!binaryFound() && !onPath('cargo')) say('cargo is not on PATH; `npm test` and `npm run build` need Rust (https://rustup.rs).')
  process.exit(0)
}
if (binaryFound()) process.exit(0)

if (!onPath('cargo')) {
  say(
    `no native binary for ${platform} is here (neither ${root}/procvisor.${platform}.node nor the package ` +
      `procvisor-${platform}), and building one from source needs Rust, but cargo is not on PATH. ` +
      'Install Rust (https://rustup.rs) and install procvisor again, or install the published package ' +
      `(npm install procvisor), whose prebuilt binaries cover linux-x64/arm64 (glibc, musl) and darwin-x64/arm64.`,
  )
  process.exit(1)
}

say(`no prebuilt binary for ${platform}: building the release addon from source with cargo (a few minutes the first time)…`)
const args = ['build', '--platform', '--release', '--js', 'binding.js', '--dts', 'binding.d.ts']
const cli = napiCli()
// A git install has the devDependencies (npm installs them before packing); a bare folder may not,
// so the napi CLI of the version in devDependencies is fetched through npx then.
const r = cli
  ? spawnSync(process.execPath, [cli, ...args], { cwd: root, stdio: 'inherit' })
  : spawnSync('npx', ['-y', '-p', `@napi-rs/cli@${devDependency('@napi-rs/cli')}`, 'napi', ...args], { cwd: root, stdio: 'inherit' })
if (r.status !== 0 || !binaryFound()) {
  say(`the build from source failed (${r.error ? r.error.message : `exit ${r.status ?? r.signal}`}); see the cargo output above.`)
  process.exit(1)
}
say(`built ${path.join(root, `procvisor.${platform}.node`)}`)

function realpath(p) {
  try {
    return fs.realpathSync(p)
  } catch {
    return path.resolve(p)
  }
}

/** A loader plus a binary it will load: a local build, or the platform package next to procvisor. */
function binaryFound() {
  if (!fs.existsSync(path.join(root, 'binding.js'))) return false
  if (fs.existsSync(path.join(root, `procvisor.${platform}.node`))) return true
  try {
    require.resolve(`procvisor-${platform}`, { paths: [root] })
    return true
  } catch {
    return false
  }
}

function napiCli() {
  try {
    const dir = path.dirname(require.resolve('@napi-rs/cli/package.json', { paths: [root] }))
    const { bin } = JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8'))
    return path.join(dir, typeof bin === 'string' ? bin : bin.napi)
  } catch {
    return null
  }
}

function devDependency(name) {
  return JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')).devDependencies[name]
}

function onPath(cmd) {
  return (process.env.PATH || '').split(path.delimiter).some((dir) => {
    try {
      fs.accessSync(path.join(dir || '.', cmd), fs.constants.X_OK)
      return true
    } catch {
      return false
    }
  })
}

/** napi's platform name for this machine (linux-x64-gnu, darwin-arm64, ...). */
function hostPlatform() {
  if (process.platform !== 'linux') return `${process.platform}-${process.arch}`
  process.report.excludeNetwork = true
  const glibc = process.report.getReport().header.glibcVersionRuntime
  return `linux-${process.arch}-${glibc ? 'gnu' : 'musl'}`
}
