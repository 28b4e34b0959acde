'use strict'
// What `waitForLog` looks for in output: text, or a regular expression matched in linear time by
// the addon's engine, so that no pattern can hold the event loop (JS's own engine backtracks:
// `/(a+)+$/` against 25 a's and a '!' took four seconds). A RegExp that needs backtracking
// (lookaround, backreferences) runs in JS's engine only when the program gave it itself; a
// pattern from elsewhere (an agent's tool call, a persistent sandbox's client) is refused.

const { binding } = require('../native/native')
const { invalidOption, codes } = require('../native/errors')
const { describe } = require('../native/util')

class LogMatcher {
  /** @param {string|RegExp} pattern  @param {(text: string) => ({ index: number, text: string } | null)} find */
  constructor(pattern, find) {
    this.pattern = pattern
    this.find = find
  }

  toString() {
    return String(this.pattern)
  }
}

/**
 * The matcher of `pattern` (a string, a RegExp, or a matcher made already). With `linearOnly`,
 * a RegExp the linear engine cannot run is an InvalidProcessOptionError instead of a JS match.
 */
function matcherOf(pattern, { linearOnly = false } = {}) {
  if (pattern instanceof LogMatcher) return pattern
  if (typeof pattern === 'string') {
    return new LogMatcher(pattern, (text) => {
      const index = text.indexOf(pattern)
      return index < 0 ? null : { index, text: pattern }
    })
  }
  if (!(pattern instanceof RegExp)) throw invalidOption(`pattern must be a string or a RegExp, got ${describe(pattern)}`)
  let linear
  try {
    linear = new binding.LogPattern(pattern.source, pattern.flags)
  } catch (e) {
    if (linearOnly || e.code !== codes.INVALID_PROCESS_OPTION) throw e
  }
  if (linear) return new LogMatcher(pattern, (text) => linear.find(text))
  // A private copy without g/y, so lastIndex state never leaks between windows or callers.
  const re = new RegExp(pattern.source, pattern.flags.replace(/[gy]/g, ''))
  return new LogMatcher(pattern, (text) => {
    const m = re.exec(text)
    return m ? { index: m.index, text: m[0] } : null
  })
}

/** A RegExp from elsewhere (its source and flags), refused unless it runs in linear time. */
function linearPattern(source, flags) {
  if (typeof source !== 'string' || typeof flags !== 'string') throw invalidOption('a pattern needs a string source and flags')
  // Checked by JS's own parser first, so that the error names JS's syntax.
  const re = new RegExp(source, flags)
  return matcherOf(re, { linearOnly: true })
}

module.exports = { LogMatcher, matcherOf, linearPattern }
