'use strict'
// lib/mastra/: what only the procvisor/mastra entry (mastra/) needs: the application's own
// @mastra/core (here) and a sandbox's paths made absolute (paths.js). Requires lib/native/ only;
// Mastra's rules for a process are in lib/process/mastra-rules.js, since the core applies them.
//
// Finds the application's own copy of a package that procvisor builds on without depending on it
// (@mastra/core, a peer dependency). Node resolves procvisor's imports from procvisor's real path. Installed
// from a folder (`npm install ../procvisor`), procvisor is a symlink in the application's
// node_modules whose real path is the clone: the application's packages are not found from there,
// or a different copy is (the clone's own dev dependencies), and classes that must extend the
// application's would extend another. So the search starts where procvisor is installed, as the
// application sees it, then procvisor's real path, then the working directory and the main module.

const fs = require('node:fs')
const path = require('node:path')
const { pathToFileURL } = require('node:url')

const ROOT = path.join(__dirname, '..', '..')
const NAME = require('../../package.json').name

function realpath(p) {
  try {
    return fs.realpathSync(p)
  } catch {
    return undefined
  }
}

/** The node_modules directories Node looks in from `dir`, nearest first. */
function nodeModulesFrom(dir) {
  const out = []
  for (let d = path.resolve(dir); ; d = path.dirname(d)) {
    if (path.basename(d) !== 'node_modules') out.push(path.join(d, 'node_modules'))
    if (path.dirname(d) === d) return out
  }
}

/**
 * Where the application's search may start, nearest to procvisor's place in it first. Where
 * procvisor is a link, the search starts in the node_modules that holds the link, as for a peer
 * dependency: the linked folder's own node_modules are its development copies, not the
 * application's.
 */
function bases() {
  const starts = []
  // Node's working directory may be gone (deleted under it): the other places still count.
  try {
    starts.push(process.cwd())
  } catch {}
  if (require.main && require.main.filename) starts.push(path.dirname(require.main.filename))
  if (process.argv[1]) starts.push(path.dirname(path.resolve(process.argv[1])))
  const real = realpath(ROOT)
  const installed = []
  for (const start of starts) {
    for (const dir of nodeModulesFrom(start)) {
      const candidate = path.join(dir, NAME)
      if (candidate !== ROOT && realpath(candidate) === real) installed.push(dir)
    }
  }
  return [...new Set([...installed, ROOT, ...starts])]
}

/** The package's name and subpath of a bare specifier: '@mastra/core/workspace' → ['@mastra/core', './workspace']. */
function split(specifier) {
  const parts = specifier.split('/')
  const n = specifier.startsWith('@') ? 2 : 1
  const rest = parts.slice(n).join('/')
  return [parts.slice(0, n).join('/'), rest ? `./${rest}` : '.']
}

/**
 * The first search base from which package `name` is found, with the package's directory;
 * undefined when none has it.
 */
function locate(name) {
  for (const base of bases()) {
    for (const dir of nodeModulesFrom(base)) {
      const pkg = path.join(dir, name)
      if (fs.existsSync(path.join(pkg, 'package.json'))) return { base, pkg }
    }
  }
  return undefined
}

function notFound(specifier) {
  const err = new Error(`Cannot find module '${specifier}' from ${bases().join(', ')}`)
  err.code = 'MODULE_NOT_FOUND'
  return err
}

/** `require(specifier)` as the application would load it. */
function requireFromApplication(specifier) {
  const found = locate(split(specifier)[0])
  if (!found) throw notFound(specifier)
  return require(require.resolve(specifier, { paths: [found.base] }))
}

/**
 * `import(specifier)` as the application would load it (the ES module build, where a package
 * ships both). From procvisor's own place Node resolves it; from elsewhere the package's
 * `exports` are read here with the conditions of an import ('node', 'import', 'default').
 */
async function importFromApplication(specifier) {
  const [name, subpath] = split(specifier)
  const found = locate(name)
  if (!found) throw notFound(specifier)
  if (found.base === ROOT) return import(specifier)
  const manifest = JSON.parse(fs.readFileSync(path.join(found.pkg, 'package.json'), 'utf8'))
  const target = exportTarget(manifest, subpath)
  if (target === undefined) {
    const err = new Error(`Package subpath '${subpath}' is not defined by "exports" in ${path.join(found.pkg, 'package.json')}`)
    err.code = 'ERR_PACKAGE_PATH_NOT_EXPORTED'
    throw err
  }
  return import(pathToFileURL(path.join(found.pkg, target)).href)
}

const IMPORT_CONDITIONS = new Set(['node', 'import', 'default'])

/** The file `subpath` of a package maps to under an import, by its `exports` (exact subpaths). */
function exportTarget(manifest, subpath) {
  let exp = manifest.exports
  if (exp === undefined) return subpath === '.' ? manifest.module || manifest.main || 'index.js' : undefined
  const sugar = typeof exp === 'string' || Array.isArray(exp) || !Object.keys(exp).some((k) => k.startsWith('.'))
  if (sugar) exp = { '.': exp }
  return conditional(exp[subpath])
}

function conditional(entry) {
  if (typeof entry === 'string') return entry
  if (Array.isArray(entry)) {
    for (const e of entry) {
      const t = conditional(e)
      if (t !== undefined) return t
    }
    return undefined
  }
  if (entry && typeof entry === 'object') {
    for (const [condition, value] of Object.entries(entry)) {
      if (!IMPORT_CONDITIONS.has(condition)) continue
      const t = conditional(value)
      if (t !== undefined) return t
    }
  }
  return undefined
}

module.exports = { requireFromApplication, importFromApplication }
