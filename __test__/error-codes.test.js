'use strict'
// procvisor's error codes come from one list, the addon's (`errorCodes()`, from src/core/error.rs).
// Everything else that names a code or an error class must agree with it: the classes procvisor
// and procvisor/mastra export, the typings, the tables of docs/errors.md and the README, and the
// JavaScript that raises them.
const test = require('node:test')
const assert = require('node:assert/strict')
const { binding } = require('../lib/native')
const procvisor = require('..')
const errors = require('../lib/errors')

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
