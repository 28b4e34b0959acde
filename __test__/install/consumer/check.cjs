'use strict'
// The consumers' harness: named checks that print `ok - …` / `not ok - …` lines for the runner to
// count, and the provenance checks that prove procvisor came from this project's node_modules.
const fs = require('node:fs')
const path = require('node:path')
const assert = require('node:assert/strict')

const ROOT = process.env.INSTALL_ROOT
const CHECKOUT = process.env.CHECKOUT
const label = `${process.env.CONSUMER} on Node ${process.versions.node}`
let failed = 0

async function check(name, fn) {
  try {
    await fn()
    console.log(`ok - ${name} (${label})`)
  } catch (err) {
    failed++
    // One line per failure (the runner relays lines): the message, then where it was thrown.
    const message = String((err && err.message) || err).replace(/\s*\n\s*/g, ' ')
    const where = String((err && err.stack) || '').split('\n').find((l) => /^\s+at .*(consumer|mastra)\./.test(l))
    console.log(`not ok - ${name} (${label}): ${message}${where ? ` [${where.trim()}]` : ''}`)
  }
}

function finish() {
  process.exitCode = failed ? 1 : 0
}

const inside = (file, dir) => file === dir || file.startsWith(dir + path.sep)

/** Is `pid` a live process (a zombie counts as gone: nobody reaped it, but it runs nothing)? */
function alive(pid) {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8')
    return !/^[ZX]$/.test(stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3))
  } catch {
    return false
  }
}

async function eventually(fn, ms = 3000) {
  const end = Date.now() + ms
  for (;;) {
    const v = await fn()
    if (v || Date.now() > end) return v
    await new Promise((r) => setTimeout(r, 20))
  }
}

/**
 * Every file this process mapped (the .node addon included) and every CommonJS module it loaded:
 * procvisor's must come from ROOT/node_modules, and nothing at all from the checkout.
 */
function assertProvenance({ modules = Object.keys(require.cache), resolved = [] } = {}) {
  const nm = path.join(ROOT, 'node_modules')
  const mapped = [
    ...new Set(
      fs
        .readFileSync('/proc/self/maps', 'utf8')
        .split('\n')
        .map((l) => l.split(/\s+/).slice(5).join(' '))
        .filter((f) => f.startsWith('/')),
    ),
  ]
  process.report.excludeNetwork = true
  const shared = process.report.getReport().sharedObjects
  const { PLATFORM } = process.env
  const addon = fs.realpathSync(path.join(nm, `procvisor-${PLATFORM}`, `procvisor.${PLATFORM}.node`))
  const addons = mapped.filter((f) => f.endsWith('.node'))
  assert.deepEqual(addons, [addon], 'the one native addon mapped is the installed platform package')
  assert.ok(shared.includes(addon), 'process.report lists the installed addon')
  const ours = modules.filter((f) => inside(f, path.join(nm, 'procvisor')))
  assert.ok(ours.length > 0, 'procvisor modules were loaded from node_modules/procvisor')
  for (const f of modules) assert.ok(inside(f, ROOT), `${f} is inside the project`)
  for (const f of resolved) assert.ok(inside(f, nm), `${f} is inside ${nm}`)
  for (const f of [...mapped, ...shared, ...modules, ...resolved]) assert.ok(!inside(f, CHECKOUT), `${f} is outside the checkout`)
  return { addon, modules: ours.length }
}

module.exports = { check, finish, alive, eventually, assertProvenance, ROOT, CHECKOUT, assert }
