'use strict'
// The caller's frames on a rejected call. An error made by the addon as a native promise settles
// (`fromNative`, called from the event loop) or by the supervisor's reply has no JS caller on its
// stack: it would show one frame and nothing of the program that made the call. Each public async
// method is wrapped once: it captures the stack where the program called it, before any await,
// and a rejection gets those frames in place of whatever callers its own stack had.

const path = require('node:path')
const { pathToFileURL } = require('node:url')

const ROOT = path.join(__dirname, '..', '..')
// procvisor's own code: lib/ and mastra/ (not its tests or examples).
const OWN = [path.join(ROOT, 'lib') + path.sep, path.join(ROOT, 'mastra') + path.sep, `${pathToFileURL(ROOT).href}/mastra/`]
// Frames that say how an error was made or carried, not where: the factory and the wrapper.
const PLUMBING = [path.join(__dirname, 'errors.js:'), `${__filename}:`]

/** The stack an error had before any graft, so that an outer call's graft replaces an inner one's. */
const OWN_STACK = Symbol('procvisor.ownStack')

/** A frame of procvisor's own code, not of the program that called it. */
function isOwnFrame(line) {
  return OWN.some((p) => line.includes(p)) && !PLUMBING.some((p) => line.includes(p))
}

/**
 * Gives `err` the stack: its own header and its frames in procvisor's code (where it was made),
 * then the frames of `site` (where the program called). Other frames it had are callers, which
 * `site` holds in full. The outermost call's graft is the last, so it wins.
 */
function graft(err, site) {
  if (!(err instanceof Error) || typeof site.stack !== 'string') return err
  let own = err[OWN_STACK]
  if (own === undefined) {
    own = err.stack
    if (typeof own !== 'string') return err
    Object.defineProperty(err, OWN_STACK, { value: own, configurable: true })
  }
  const lines = own.split('\n')
  let i = 0
  while (i < lines.length && !/^\s+at /.test(lines[i])) i++
  const callers = site.stack.split('\n')
  let j = 0
  while (j < callers.length && !/^\s+at /.test(callers[j])) j++
  try {
    err.stack = [...lines.slice(0, i), ...lines.slice(i).filter(isOwnFrame), ...callers.slice(j)].join('\n')
  } catch {
    // A frozen error keeps the stack it has.
  }
  return err
}

/**
 * Traced calls under way on the stack: a traced method called by another one, before that one's
 * first await, has its caller's frames in the outer call's site already, and the outer call
 * grafts them on what it rejects with. Capturing again cost each call the whole stack's walk
 * (the captures were a tenth of a persistent sandbox supervisor's JS time per spawn, and a spawn
 * and its wait went through three or four traced methods).
 */
let depth = 0
/** Whether calls capture their site: off in a process whose errors no person reads the stack of. */
let capturing = true

/** `fn` as a method whose rejection carries its caller's frames. */
function traced(fn) {
  const method = function () {
    if (depth > 0 || !capturing) {
      try {
        return fn.apply(this, arguments)
      } catch (err) {
        return Promise.reject(err)
      }
    }
    const site = {}
    Error.captureStackTrace(site, method)
    let result
    depth++
    try {
      result = fn.apply(this, arguments)
    } catch (err) {
      // The surface is async: a bad argument rejects, as from an `async` function.
      return Promise.reject(graft(err, site))
    } finally {
      depth--
    }
    return result.then(undefined, (err) => {
      throw graft(err, site)
    })
  }
  Object.defineProperty(method, 'name', { value: fn.name })
  Object.defineProperty(method, 'length', { value: fn.length })
  return method
}

/**
 * Turns the capture of callers' frames off (or on again) for this process. A persistent
 * sandbox's supervisor turns it off: its errors cross the socket as a code and a message, and
 * the client's own call grafts its program's frames on them.
 */
function captureCallSites(on) {
  capturing = on === true
}

/**
 * Wraps the named async methods of `Class` (its own or inherited) with `traced`. Each method must
 * return a promise: the public surface is async, so a bad argument rejects rather than throws.
 */
function traceMethods(Class, names) {
  const proto = Class.prototype
  for (const name of names) {
    const fn = proto[name]
    if (typeof fn !== 'function') throw new TypeError(`${Class.name}.${name} is not a method`)
    Object.defineProperty(proto, name, { value: traced(fn), writable: true, configurable: true, enumerable: false })
  }
}

module.exports = { traced, traceMethods, graft, captureCallSites }
