'use strict'
// Node's own working directory deleted under it: a ProcessManager given an absolute
// workingDirectory works, and one that would resolve against the missing directory throws
// INVALID_PROCESS_CWD. Each case runs in a child Node process that deletes its own cwd, so the
// test runner's cwd is never touched.
const test = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { spawnSync } = require('node:child_process')

const ROOT = path.resolve(__dirname, '..')

/** Runs `body` (async, returns a JSON value) in a child Node whose cwd is deleted first. */
function inGoneCwd(body) {
  const gone = fs.mkdtempSync(path.join(os.tmpdir(), 'procvisor-gone-'))
  const script = `
    const fs = require('node:fs')
    // As a program that chdir'd into a temporary directory and removed it (process.cwd() then throws).
    process.chdir(process.argv[1])
    fs.rmdirSync(process.argv[1])
    const procvisor = require(${JSON.stringify(ROOT)})
    const error = (e) => ({ name: e.name, code: e.code, message: e.message, typed: e instanceof procvisor.InvalidProcessCwdError })
    ;(async () => { ${body} })().then(
      (v) => { process.stdout.write(JSON.stringify(v)); process.exit(0) },
      (e) => { process.stderr.write(String(e && e.stack)); process.exit(1) },
    )`
  const r = spawnSync(process.execPath, ['-e', script, gone], { encoding: 'utf8', timeout: 30_000 })
  fs.rmSync(gone, { recursive: true, force: true })
  assert.equal(r.status, 0, `child failed: ${r.stderr}`)
  return JSON.parse(r.stdout)
}

test('Node’s cwd deleted: an absolute workingDirectory works', () => {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'procvisor-wd-')))
  fs.mkdirSync(path.join(dir, 'sub'))
  try {
    const out = inGoneCwd(`
      const pm = new procvisor.ProcessManager({ workingDirectory: ${JSON.stringify(dir)} })
      const h = await pm.spawn('pwd')
      const shell = (await h.wait()).stdout.trim()
      const inSub = (await (await pm.spawn('pwd', { cwd: 'sub' })).wait()).stdout.trim()
      const argv = (await (await pm.exec(['pwd'])).output({ encoding: 'utf8' })).stdout.trim()
      await pm.close()
      return { wd: pm.workingDirectory, shell, inSub, argv }
    `)
    assert.deepEqual(out, { wd: dir, shell: dir, inSub: path.join(dir, 'sub'), argv: dir })
  } finally {
    fs.rmSync(dir, { recursive: true, force: true })
  }
})

test('Node’s cwd deleted: no or a relative workingDirectory is INVALID_PROCESS_CWD', () => {
  const out = inGoneCwd(`
    const r = []
    for (const o of [undefined, {}, { workingDirectory: 'rel' }]) {
      try { new procvisor.ProcessManager(o); r.push('constructed') } catch (e) { r.push(error(e)) }
    }
    return r
  `)
  assert.equal(out.length, 3)
  for (const e of out) {
    assert.equal(e.code, 'INVALID_PROCESS_CWD', JSON.stringify(e))
    assert.equal(e.name, 'InvalidProcessCwdError')
    assert.equal(e.typed, true)
    assert.match(e.message, /working directory of this Node process.*ENOENT.*absolute workingDirectory/)
  }
})
