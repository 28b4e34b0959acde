'use strict'
// Process names: the one rule for what a name may be, and the table that keeps a name to one
// live process. Every face that starts processes (ProcessManager, the Mastra face in this Node
// process, a persistent sandbox's supervisor) holds one table and checks names here.

const errors = require('../native/errors')
const { describe } = require('../native/util')

const NAME = /^[A-Za-z0-9._-]{1,64}$/

/** Whether `name` is a valid process name. */
function validName(name) {
  return typeof name === 'string' && NAME.test(name) && !/^\d+$/.test(name)
}

/**
 * Throws InvalidProcessOptionError unless `name` is undefined or a valid name. All digits are
 * refused so that wherever a pid or a name is accepted, a name never reads as a pid.
 */
function checkName(name) {
  if (name === undefined) return
  if (!validName(name)) {
    throw errors.invalidOption(`name must be 1 to 64 characters of A-Z, a-z, 0-9, '.', '_' and '-', not all digits, got ${describe(name)}`)
  }
}

/** Whether `id` (a pid or a name, as a lookup is given it) can only be a name. */
function isName(id) {
  return typeof id === 'string' && !/^\d+$/.test(id)
}

/**
 * Names and the process that took each last. A name is reserved before its launch, so two
 * spawns in flight cannot both take it; it is free again when the launch fails or once its
 * process has exited (asked of `alive` at the next reservation, so that nothing has to watch
 * every named process for its end). Until then a lookup by name still finds the exited one.
 */
class NameTable {
  /** `alive(entry)`: whether the process of an entry has not exited yet; `pidOf(entry)`: its pid now. */
  constructor(alive, pidOf = (entry) => entry.pid) {
    this._alive = alive
    this._pidOf = pidOf
    /** name → the entry of its process, or `null` while its launch is in flight. */
    this._held = new Map()
  }

  /** Takes `name` (checked) for a launch; a name a live process holds throws, naming it. */
  reserve(name) {
    checkName(name)
    if (name === undefined) return
    const holder = this._held.get(name)
    if (holder === null || (holder !== undefined && this._alive(holder))) {
      const which = holder === null ? 'a process being started' : `process ${this._pidOf(holder)}`
      throw errors.invalidOption(`name ${name} is taken by ${which}, which is running; a name is free again once its process has exited`)
    }
    this._held.set(name, null)
  }

  /** Gives a reserved name to the launched process (whose pid a clash names). */
  bind(name, entry) {
    if (name !== undefined) this._held.set(name, entry)
  }

  /** Frees `name` if `entry` (`null`: a launch in flight) holds it. */
  release(name, entry = null) {
    if (name !== undefined && this._held.get(name) === entry) this._held.delete(name)
  }

  /** The entry of the process that took `name` last, or undefined. */
  get(name) {
    return this._held.get(name) ?? undefined
  }

  clear() {
    this._held.clear()
  }
}

module.exports = { checkName, validName, isName, NameTable }
