'use strict'
// A rejected call's error carries the frames of the program that made the call, also when the
// addon made the error as a native promise settled (no JS caller on the stack then).
const test = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { ProcessManager, InvalidProcessCwdError, ProcessExitedBeforeReadyError } = require('..')

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'procvisor-stacks-'))
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
