'use strict'
// waitForLog's regular expressions run in linear time: a pattern that backtracks catastrophically
// in JS's engine neither holds the event loop nor misses a match. Lookaround, which the linear
// engine cannot run, still works for a program's own patterns.
const test = require('node:test')
const assert = require('node:assert/strict')
const os = require('node:os')
const { ProcessManager, InvalidProcessOptionError } = require('..')
const { matcherOf, linearPattern } = require('../lib/process/pattern')

const pm = new ProcessManager({ workingDirectory: os.tmpdir() })
test.after(() => pm.close())

/** The longest gap between two 10 ms ticks while `fn` runs. */
async function longestStall(fn) {
  let last = Date.now()
  let worst = 0
  const t = setInterval(() => {
    worst = Math.max(worst, Date.now() - last)
    last = Date.now()
  }, 10)
  try {
    return { value: await fn(), stall: () => Math.max(worst, Date.now() - last) }
  } finally {
    clearInterval(t)
  }
}

test('/(a+)+$/m against 25 a and a "!" does not hold the event loop, and a later line still matches', async () => {
  const p = await pm.exec(['sh', '-c', 'printf "%s!\\n" aaaaaaaaaaaaaaaaaaaaaaaaa; sleep 0.2; echo aaaa'])
  const { value, stall } = await longestStall(() => p.waitForLog(/(a+)+$/m, { timeout: 10_000 }))
  // JS's backtracking engine needs about four seconds for the first line alone.
  assert.ok(stall() < 1000, `the event loop stalled ${stall()} ms`)
  assert.equal(value.match, 'aaaa')
})

test('flags, indices and a lookbehind: the linear engine where it can, JS for the rest', async () => {
  const p = await pm.exec(['sh', '-c', 'echo "Server READY on 8080"'])
  assert.equal((await p.waitForLog(/ready on (\d+)/i)).match, 'READY on 8080')
  assert.equal((await p.waitForLog(/(?<=on )\d+/)).match, '8080')
  assert.deepEqual(matcherOf(/b/).find('😀é b'), { index: 4, text: 'b' })
})

test('a pattern from elsewhere is refused when it needs backtracking, with a typed error', () => {
  assert.throws(() => linearPattern('(a)\\1', ''), (e) => e instanceof InvalidProcessOptionError && /linear time/.test(e.message))
  assert.throws(() => linearPattern('a(?=b)', ''), InvalidProcessOptionError)
  assert.equal(linearPattern('(a+)+$', '').find('aaa!aa').text, 'aa')
})
