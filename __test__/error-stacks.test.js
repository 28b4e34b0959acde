'use strict'
// A rejected call's error carries the frames of the program that made the call, also when the
// addon made the error as a native promise settled (no JS caller on the stack then).
const test = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const { ProcessManager, InvalidProcessCwdError, ProcessExitedBeforeReadyError } = require('..')
const { tempDir } = require('./helpers')

const tmp = tempDir('procvisor-stacks-')
const pm = new ProcessManager({ workingDirectory: tmp })
test.after(() => pm.close())
const missing = path.join(tmp, 'missing')

async function rejection(fn) {
  try {
    await fn()
  } catch (e) {
    return e
  }
  assert.fail(`${fn.name} did not reject`)
}

/** The error's frames name this file and `fn`, and its header is its own. */
function assertCalledFrom(err, fn, Class) {
  assert.ok(err instanceof Class, `${err && err.name}: ${err && err.message}`)
  const lines = err.stack.split('\n')
  assert.equal(lines[0], `${err.name}: ${err.message}`)
  const frames = lines.filter((l) => /^\s+at /.test(l))
  assert.ok(frames.some((l) => l.includes(__filename) && l.includes(fn.name)), `no frame of ${fn.name} in ${__filename}:\n${err.stack}`)
}

async function execInMissingDirectory() {
  await pm.exec(['true'], { cwd: missing })
}

async function spawnInMissingDirectory() {
  await pm.spawn('true', { cwd: missing })
}

async function terminalInMissingDirectory() {
  await pm.createTerminal({ cwd: missing })
}

// `return` of the call's promise: no await in this function, so V8's async frames cannot name it.
async function execReturnedWithoutAwait() {
  return pm.exec(['true'], { cwd: missing })
}

async function waitForPortOfAnExitingProcess() {
  const p = await pm.exec(['sh', '-c', 'exit 3'])
  await p.waitForExit()
  await p.waitForPort(1, { timeout: 5000 })
}

test('a launch refused by the addon names the calling function of this file', async () => {
  assertCalledFrom(await rejection(execInMissingDirectory), execInMissingDirectory, InvalidProcessCwdError)
  assertCalledFrom(await rejection(spawnInMissingDirectory), spawnInMissingDirectory, InvalidProcessCwdError)
  assertCalledFrom(await rejection(terminalInMissingDirectory), terminalInMissingDirectory, InvalidProcessCwdError)
  assertCalledFrom(await rejection(execReturnedWithoutAwait), execReturnedWithoutAwait, InvalidProcessCwdError)
})

test('a wait that rejects after native waits names the calling function of this file', async () => {
  assertCalledFrom(await rejection(waitForPortOfAnExitingProcess), waitForPortOfAnExitingProcess, ProcessExitedBeforeReadyError)
})

test('the frames where procvisor made the error are kept, once, before the caller', async () => {
  const err = await rejection(waitForPortOfAnExitingProcess)
  const frames = err.stack.split('\n').slice(1)
  const own = frames.findIndex((l) => l.includes(path.join(__dirname, '..', 'lib', 'process', 'observe.js')))
  const caller = frames.findIndex((l) => l.includes(__filename))
  assert.ok(own >= 0 && own < caller, err.stack)
  assert.equal(frames.filter((l) => l.includes('waitForPortOfAnExitingProcess')).length, 1, err.stack)
})

test('a traced call made inside another one rejects through it with the outer caller frames; with capture off, none are grafted', async () => {
  const { traced, captureCallSites } = require('../lib/native/trace')
  // An error made where no JS caller is on the stack, as a native promise's settling makes it.
  const later = () => new Promise((_, reject) => setImmediate(() => reject(new Error('made later'))))
  const inner = traced(function inner() {
    return later()
  })
  const outer = traced(function outer() {
    return inner()
  })
  async function callsOuter() {
    return outer()
  }
  async function callsInner() {
    return inner()
  }
  assertCalledFrom(await rejection(callsOuter), callsOuter, Error)
  assertCalledFrom(await rejection(callsInner), callsInner, Error)
  // A bad argument (a synchronous throw) still rejects, through both.
  const throws = traced(function throws() {
    throw new TypeError('bad')
  })
  const wraps = traced(function wraps() {
    return throws()
  })
  async function callsWraps() {
    return wraps()
  }
  assertCalledFrom(await rejection(callsWraps), callsWraps, TypeError)
  captureCallSites(false)
  try {
    const err = await rejection(callsOuter)
    assert.ok(!err.stack.includes('callsOuter'), err.stack)
    assert.ok((await rejection(callsWraps)) instanceof TypeError)
  } finally {
    captureCallSites(true)
  }
})
