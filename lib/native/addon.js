'use strict'
// The addon itself, loaded once per JS realm. Apart from native.js (which registers the realm)
// because the error classes are built from the addon's list: errors.js needs the addon before
// native.js can need errors.js.

if (process.platform === 'win32') {
  // Process groups, killpg and pidfd have no Windows equivalent here: an explicit gap, not a crash
  // in the middle of a spawn.
  throw new Error('procvisor does not support Windows yet: it needs POSIX process groups (Linux, macOS).')
}

const binding = loadBinding()

module.exports = { binding }

function loadBinding() {
  try {
    return require('../../binding.js')
  } catch (err) {
    // napi's loader reports a missing binary as "Cannot find native binding" (or, in an unbuilt
    // clone, as a MODULE_NOT_FOUND for binding.js itself); neither says which package was expected
    // or what to do. Everything below runs only on this failure path.
    throw missingBinaryError(err)
  }
}

function missingBinaryError(cause) {
  const fs = require('node:fs')
  const path = require('node:path')
  const root = path.join(__dirname, '..', '..')
  const platform = platformName()
  const pkg = `procvisor-${platform}`
  const prebuilt = prebuiltPlatforms(root)
  const lines = []

  if (!fs.existsSync(path.join(root, 'binding.js'))) {
    lines.push(`procvisor: this copy at ${root} was never built (binding.js is missing), so no native binary for ${platform} can be loaded.`)
  } else if (prebuilt.length > 0 && !prebuilt.includes(platform)) {
    lines.push(`procvisor: there is no prebuilt native binary for ${platform} (prebuilt: ${prebuilt.join(', ')}), so the package ${pkg} does not exist.`)
  } else {
    lines.push(`procvisor: no native binary for ${platform} could be loaded. It ships in the package ${pkg}, an optional dependency of procvisor; ${packageState(pkg, root, cause)}.`)
    lines.push(
      'Reinstall with optional dependencies enabled (no --omit=optional / --no-optional; a lockfile written on another ' +
        'platform can leave them out: remove node_modules and package-lock.json, then npm install).',
    )
  }
  lines.push(
    'To build from source you need Rust (cargo, https://rustup.rs): run `npm install && npm run build` in a clone of ' +
      'procvisor and install that folder, or install procvisor from its git URL with cargo on PATH (it builds itself).',
  )
  const error = new Error(lines.join('\n'), { cause })
  error.code = 'PROCVISOR_NATIVE_BINARY_MISSING'
  return error
}

/** The platform part of napi's artifact names: linux-x64-gnu, linux-arm64-musl, darwin-arm64. */
function platformName() {
  if (process.platform !== 'linux') return `${process.platform}-${process.arch}`
  return `linux-${process.arch}-${isMusl() ? 'musl' : 'gnu'}`
}

function isMusl() {
  try {
    return require('node:fs').readFileSync('/usr/bin/ldd', 'utf8').includes('musl')
  } catch {
    if (!process.report) return false
    process.report.excludeNetwork = true
    const header = process.report.getReport().header
    return !header.glibcVersionRuntime
  }
}

/** The platforms with a prebuilt package, from the napi targets in package.json. */
function prebuiltPlatforms(root) {
  try {
    const { napi } = require(require('node:path').join(root, 'package.json'))
    const arch = { x86_64: 'x64', aarch64: 'arm64' }
    return (napi.targets || []).map((triple) => {
      const [cpu, , os, abi] = triple.split('-')
      return os === 'darwin' ? `darwin-${arch[cpu] || cpu}` : `${os}-${arch[cpu] || cpu}-${abi}`
    })
  } catch {
    return []
  }
}

/** Why the platform package did not load: absent, or present but broken (then its own error). */
function packageState(pkg, root, cause) {
  let dir
  try {
    dir = require('node:path').dirname(require.resolve(`${pkg}/package.json`, { paths: [root] }))
  } catch {
    return 'it is not installed'
  }
  // napi's loader flattens the load errors into a chain of plain messages; the platform package's
  // own failure (a missing .node file, a wrong glibc, a truncated download) is the useful one.
  let detail = ''
  for (let e = cause && cause.cause; e; e = e.cause) {
    if (typeof e.message === 'string' && (e.message.includes(dir) || e.message.includes(pkg))) {
      detail = e.message.split('\n')[0]
      break
    }
  }
  return `it is installed at ${dir} but did not load${detail ? `: ${detail}` : ''}`
}
