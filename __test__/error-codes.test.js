'use strict'
// procvisor's error codes come from one list, the addon's (`errorCodes()`, from src/core/error.rs).
// Everything else that names a code or an error class must agree with it: the classes procvisor
// and procvisor/mastra export, the typings, the tables of docs/errors.md and the README, and the
// JavaScript that raises them.
const test = require('node:test')
const assert = require('node:assert/strict')
const { binding } = require('../lib/native/native')
const procvisor = require('..')
const errors = require('../lib/native/errors')

const LIST = binding.errorCodes()
const BUILTINS = { RangeError, TypeError }

test('the list names each code and each class once, each extending a known class', () => {
  assert.ok(LIST.length > 0)
  assert.equal(new Set(LIST.map((k) => k.code)).size, LIST.length, 'a code is listed twice')
  assert.equal(new Set(LIST.map((k) => k.name)).size, LIST.length, 'a class is listed twice')
  for (const k of LIST) assert.ok(['ProcessError', 'RangeError', 'TypeError'].includes(k.base), `${k.name} extends ${k.base}`)
})

test('procvisor exports one class for each code of the list, and no other error class', () => {
  for (const { code, name, base } of LIST) {
    const C = procvisor[name]
    assert.equal(typeof C, 'function', `procvisor exports no ${name}`)
    assert.equal(C.name, name)
    assert.equal(C.code, code, `${name}.code`)
    assert.equal(errors.byCode(code), C, `byCode(${code})`)
    const e = new C('m')
    assert.equal(e.code, code)
    assert.equal(e.name, name)
    assert.equal(e.message, 'm')
    assert.ok(e instanceof Error)
    if (base === 'ProcessError') assert.ok(e instanceof procvisor.ProcessError, `${name} is a ProcessError`)
    else {
      assert.equal(Object.getPrototypeOf(C), BUILTINS[base], `${name} extends ${base} directly`)
      assert.ok(!(e instanceof procvisor.ProcessError), `${name} is not a ProcessError`)
    }
  }
  const listed = new Set(LIST.map((k) => k.name))
  const exported = Object.entries(procvisor).filter(([, v]) => typeof v === 'function' && v.prototype instanceof Error)
  for (const [name, C] of exported) {
    assert.ok(name === 'ProcessError' || listed.has(name), `procvisor exports ${name} (${C.code}), which the list lacks`)
  }
})

test('an error the addon raises has the class of its code', () => {
  const e = errors.fromNative('PROCESS_SPAWN_FAILED', 'ENOENT: x', 'ENOENT', 2)
  assert.ok(e instanceof procvisor.ProcessSpawnFailedError)
  assert.equal(e.osCode, 'ENOENT')
  assert.equal(e.errno, 2)
  assert.throws(() => binding.checkSignal('SIGFOO'), procvisor.InvalidProcessSignalError)
})

// ---------------------------------------------------------------------------------------------
// The JavaScript that raises the codes: every code and class it names is one of the list's.
// ---------------------------------------------------------------------------------------------

const fs = require('node:fs')
const path = require('node:path')
const ts = require('typescript')

const ROOT = path.join(__dirname, '..')
const CODES = new Set(LIST.map((k) => k.code))

/** procvisor's own JavaScript (what the package ships), but lib/native/errors.js, which reads the list. */
function sources() {
  const out = ['index.js', 'index.mjs'].map((f) => path.join(ROOT, f))
  const walk = (dir) => {
    for (const d of fs.readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, d.name)
      if (d.isDirectory()) walk(p)
      else if (/\.[cm]?js$/.test(d.name) && p !== path.join(ROOT, 'lib', 'native', 'errors.js')) out.push(p)
    }
  }
  walk(path.join(ROOT, 'lib'))
  walk(path.join(ROOT, 'mastra'))
  return out
}

/** Every node of `file`'s syntax tree (comments are not nodes, so a code in prose is not one). */
function nodesOf(file) {
  const source = ts.createSourceFile(file, fs.readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true, ts.ScriptKind.JS)
  const out = []
  const visit = (n) => {
    out.push(n)
    ts.forEachChild(n, visit)
  }
  visit(source)
  return { source, nodes: out }
}

function where(source, node) {
  const { line } = source.getLineAndCharacterOfPosition(node.getStart())
  return `${path.relative(ROOT, source.fileName)}:${line + 1}`
}

/** Codes of others that procvisor compares or mimics: Node's own, which the list does not hold. */
const NODE_CODE = /^(ERR_[A-Z0-9_]+|MODULE_NOT_FOUND)$/
/**
 * The one code outside the list: the load of the addon failed, so there is no list to read, and
 * the error is a plain Error (documented in docs/errors.md).
 */
const BINARY_MISSING = 'PROCVISOR_NATIVE_BINARY_MISSING'
/** Environment variables the command line reads: names of the same shape, not codes. */
const ENV_NAMES = new Set(['PROCVISOR_TIMEOUT_MS'])

test('the JavaScript spells no code of its own: each goes through the list', () => {
  const found = []
  for (const file of sources()) {
    const { source, nodes } = nodesOf(file)
    for (const n of nodes) {
      if (!ts.isStringLiteral(n) && !ts.isNoSubstitutionTemplateLiteral(n)) continue
      if (!/^[A-Z][A-Z0-9]*(_[A-Z0-9]+)+$/.test(n.text) || NODE_CODE.test(n.text) || ENV_NAMES.has(n.text)) continue
      if (n.text === BINARY_MISSING && path.relative(ROOT, file) === path.join('lib', 'native', 'addon.js')) continue
      found.push(`${where(source, n)} '${n.text}'${CODES.has(n.text) ? '' : ' (not a code of the list)'}`)
    }
  }
  assert.deepEqual(found, [], 'use errors.codes.X or the class itself instead of a literal')
})

test('every error class and code the JavaScript reads from lib/native/errors.js exists', () => {
  const exported = new Set(Object.keys(errors))
  const missing = []
  for (const file of sources()) {
    const { source, nodes } = nodesOf(file)
    const isErrorsModule = (e) =>
      e && ts.isCallExpression(e) && e.expression.getText() === 'require' && /(^|\/)errors(\.js)?$/.test(e.arguments[0]?.text || '')
    // `errors` is the name every module gives lib/native/errors.js; `errors.codes` is its list of codes.
    const isErrors = (e) => (ts.isIdentifier(e) && e.text === 'errors') || isErrorsModule(e)
    const isCodes = (e) => e && ts.isPropertyAccessExpression(e) && e.name.text === 'codes' && isErrors(e.expression)
    const check = (name, node, inCodes) => {
      if (inCodes ? !CODES.has(name) : !exported.has(name)) missing.push(`${where(source, node)} ${inCodes ? 'errors.codes.' : ''}${name}`)
    }
    for (const n of nodes) {
      if (ts.isPropertyAccessExpression(n) && isErrors(n.expression)) check(n.name.text, n, false)
      if (ts.isPropertyAccessExpression(n) && isCodes(n.expression)) check(n.name.text, n, true)
      if (ts.isElementAccessExpression(n) && isCodes(n.expression)) missing.push(`${where(source, n)} errors.codes[…]: read a code by its name`)
      if (ts.isVariableDeclaration(n) && n.initializer && ts.isObjectBindingPattern(n.name)) {
        const inCodes = isCodes(n.initializer)
        if (!inCodes && !isErrorsModule(n.initializer)) continue
        for (const el of n.name.elements) {
          if (el.dotDotDotToken) continue
          check((el.propertyName || el.name).getText(), el, inCodes)
        }
      }
    }
  }
  assert.deepEqual(missing, [])
})

test('a code that is not in the list throws where it is read', () => {
  assert.equal(errors.codes.SANDBOX_ACCESS_DENIED, 'SANDBOX_ACCESS_DENIED')
  assert.throws(() => errors.codes.SANDBOX_ACCESS_DENIE, /SANDBOX_ACCESS_DENIE is not an error code/)
  assert.throws(() => {
    errors.codes.PROCESS_NOT_FOUND = 'X'
  }, TypeError)
})

// ---------------------------------------------------------------------------------------------
// procvisor/mastra, the typings and the docs.
// ---------------------------------------------------------------------------------------------

/** The error classes `exports` holds as plain values (getters, which load @mastra/core, are not read). */
function errorClassesOf(exports) {
  const out = new Map()
  for (const [name, d] of Object.entries(Object.getOwnPropertyDescriptors(exports))) {
    if ('value' in d && typeof d.value === 'function' && d.value.prototype instanceof Error) out.set(name, d.value)
  }
  return out
}

/** The sandbox's codes, which procvisor/mastra exports too. */
const SANDBOX = LIST.filter((k) => k.code.startsWith('SANDBOX_')).map((k) => k.name)

test("procvisor/mastra exports the sandbox's classes, the same objects as procvisor's", () => {
  const mastra = errorClassesOf(require('../mastra/index.js'))
  assert.deepEqual([...mastra.keys()].sort(), [...SANDBOX].sort())
  for (const [name, C] of mastra) assert.equal(C, procvisor[name], name)
  // The ES module entry names them again (it needs @mastra/core at import, so it is read, not run).
  const { nodes } = nodesOf(path.join(ROOT, 'mastra', 'index.mjs'))
  const named = nodes.filter((n) => ts.isExportSpecifier(n)).map((n) => n.name.text)
  assert.deepEqual(named.filter((n) => n.endsWith('Error')).sort(), [...SANDBOX].sort())
})

/** The top-level statements of a declaration file. */
function declarations(file) {
  const f = path.join(ROOT, file)
  return ts.createSourceFile(f, fs.readFileSync(f, 'utf8'), ts.ScriptTarget.Latest, true).statements
}

/** The literal type of a class member `code` (static or not), or undefined. */
function codeType(cls, isStatic) {
  const m = cls.members.find((m) => m.name?.getText() === 'code' && !!m.modifiers?.some((x) => x.kind === ts.SyntaxKind.StaticKeyword) === isStatic)
  return m && m.type && ts.isLiteralTypeNode(m.type) && ts.isStringLiteral(m.type.literal) ? m.type.literal.text : undefined
}

/** procvisor's typings: index.d.ts and the files under types/ it re-exports. */
const TYPINGS = ['index.d.ts', ...fs.readdirSync(path.join(ROOT, 'types')).filter((f) => f.endsWith('.d.ts')).map((f) => `types/${f}`)]

test("procvisor's typings declare each class of the list with its base, its code as a literal type and its doc", () => {
  const declared = new Map()
  for (const file of TYPINGS) {
    for (const s of declarations(file)) {
      if (!ts.isClassDeclaration(s) || !s.name || !/Error$/.test(s.name.text)) continue
      assert.ok(!declared.has(s.name.text), `${s.name.text} is declared twice (again in ${file})`)
      declared.set(s.name.text, s)
    }
  }
  for (const { code, name, base } of LIST) {
    const cls = declared.get(name)
    assert.ok(cls, `procvisor's typings (${TYPINGS.join(', ')}) declare no ${name}`)
    assert.equal(cls.heritageClauses?.[0].types[0].expression.getText(), base, `${name} extends`)
    assert.equal(codeType(cls, false), code, `${name}.prototype.code`)
    assert.equal(codeType(cls, true), code, `static ${name}.code`)
    const doc = ts.getJSDocCommentsAndTags(cls)[0]
    assert.ok(doc && ts.getTextOfJSDocComment(doc.comment)?.startsWith(`\`${code}\``), `the doc of ${name} begins with its code`)
  }
  const extra = [...declared.keys()].filter((n) => n !== 'ProcessError' && !LIST.some((k) => k.name === n))
  assert.deepEqual(extra, [], "procvisor's typings declare error classes that the list lacks")
})

test("mastra/index.d.ts re-exports the sandbox's classes from index.d.ts", () => {
  const names = []
  for (const s of declarations('mastra/index.d.ts')) {
    if (!ts.isExportDeclaration(s) || !s.exportClause || !ts.isNamedExports(s.exportClause)) continue
    for (const e of s.exportClause.elements) if (e.name.text.endsWith('Error')) names.push(e.name.text)
    if (s.exportClause.elements.some((e) => e.name.text.endsWith('Error'))) assert.equal(s.moduleSpecifier?.text, '../index')
  }
  assert.deepEqual(names.sort(), [...SANDBOX].sort())
})

/** The rows (class, code, what the class cell adds) of the `| class | code | when |` table of `file`. */
function tableRows(file) {
  const lines = fs.readFileSync(path.join(ROOT, file), 'utf8').split('\n')
  const start = lines.findIndex((l) => /^\| class \| code \| when \|$/.test(l))
  assert.ok(start >= 0, `${file} has no | class | code | when | table`)
  const rows = []
  for (const line of lines.slice(start + 2)) {
    if (!line.startsWith('|')) break
    const m = /^\| `(\w+)`(.*?) \| `(\w+)` \| /.exec(line)
    assert.ok(m, `${file}: a row that is not | \`Class\` | \`CODE\` | …: ${line.slice(0, 80)}`)
    rows.push({ name: m[1], note: m[2].trim(), code: m[3] })
  }
  return rows
}

for (const file of ['docs/errors.md', 'README.md']) {
  test(`${file} documents each code of the list once, with its class, and no other`, () => {
    const rows = tableRows(file)
    for (const { code, name, base } of LIST) {
      const mine = rows.filter((r) => r.code === code)
      assert.equal(mine.length, 1, `${file}: ${code} has ${mine.length} rows`)
      assert.equal(mine[0].name, name, `${file}: the class of ${code}`)
      assert.equal(mine[0].note, base === 'ProcessError' ? '' : `(a \`${base}\`)`, `${file}: ${name} says what it extends`)
    }
    const extra = rows.filter((r) => !CODES.has(r.code)).map((r) => r.code)
    assert.deepEqual(extra, [], `${file} has rows for codes that the list lacks`)
  })
}

test('the code raised when the addon cannot load, outside the list, is documented', () => {
  const doc = fs.readFileSync(path.join(ROOT, 'docs/errors.md'), 'utf8')
  assert.ok(doc.includes(`\`${BINARY_MISSING}\``), `docs/errors.md does not mention ${BINARY_MISSING}`)
})
