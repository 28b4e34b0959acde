'use strict'
// Typed errors. Every class has a stable `code` (never renamed: programs branch on it) and works
// with `instanceof`. The classes come from the addon's one list of codes (`ERROR_KINDS` in
// src/core/error.rs), so a code raised by the core, by this layer or by a persistent sandbox's
// supervisor has one spelling and one class. The native layer builds its errors through
// `fromNative`, registered once per realm: a failed native call throws or rejects with the right
// class already.

const { binding } = require('./addon')

class ProcessError extends Error {
  constructor(message, options) {
    super(message, options)
    this.name = new.target.name
  }
}

/**
 * The class of one code. A code that extends a built-in (a RangeError for a bad option, as Mastra
 * throws for a bad `maxRetainedBytes`) extends it directly and names its instances itself, as
 * ProcessError does for the others.
 */
function defineClass(name, code, base) {
  const builtins = { RangeError, TypeError }
  let C
  if (base === 'ProcessError') {
    C = { [name]: class extends ProcessError {} }[name]
  } else if (builtins[base]) {
    C = {
      [name]: class extends builtins[base] {
        constructor(message, options) {
          super(message, options)
          this.name = name
        }
      },
    }[name]
  } else {
    throw new Error(`procvisor: the error ${name} (${code}) extends ${base}, which this JavaScript does not know`)
  }
  Object.defineProperty(C.prototype, 'code', { value: code, enumerable: true })
  Object.defineProperty(C, 'code', { value: code })
  return C
}

const classes = { ProcessError }
const byCode = new Map()
const codeNames = {}
for (const { code, name, base } of binding.errorCodes()) {
  classes[name] = defineClass(name, code, base)
  byCode.set(code, classes[name])
  codeNames[code] = code
}

/**
 * Every code by its own name (`codes.SANDBOX_ACCESS_DENIED`). A name that is not a code throws
 * where it is read, so a misspelt code fails when its module loads (read codes at the top of a
 * module) instead of going out as a code nobody matches.
 */
const codes = new Proxy(Object.freeze(codeNames), {
  get(target, key) {
    if (typeof key === 'string' && !Object.hasOwn(target, key)) throw new Error(`procvisor: ${key} is not an error code`)
    return target[key]
  },
})

/**
 * The error of a failed native call, called by the addon on the JS thread. A failed spawn also
 * carries the OS error: `osCode` ('E2BIG', 'ENOENT', …) and `errno`.
 */
function fromNative(code, message, osCode, errno) {
  const C = byCode.get(code) || ProcessError
  const err = new C(message)
  if (osCode !== null && osCode !== undefined) err.osCode = osCode
  if (errno !== null && errno !== undefined) err.errno = errno
  return err
}

/** Bad option values: a RangeError (Mastra throws RangeError for a bad `maxRetainedBytes`). */
function invalidOption(message) {
  return new classes.InvalidProcessOptionError(message)
}

/** The class of a stable `code`, or undefined. */
function byCodeOf(code) {
  return byCode.get(code)
}

module.exports = { ...classes, fromNative, invalidOption, byCode: byCodeOf, codes }
