'use strict'
// A CommonJS application: require('procvisor'), real processes, asserted results.
const path = require('node:path')
const { check, finish, alive, eventually, assertProvenance, ROOT, assert } = require('./check.cjs')

async function main() {
  let pv
  await check('require("procvisor") loads the installed package', () => {
    pv = require('procvisor')
    assert.equal(typeof pv.ProcessManager, 'function')
    assert.equal(require.resolve('procvisor'), path.join(ROOT, 'node_modules/procvisor/index.js'))
    assert.equal(require.resolve('procvisor/mastra'), path.join(ROOT, 'node_modules/procvisor/mastra/index.js'))
  })
  if (!pv) return
  const pm = new pv.ProcessManager({ workingDirectory: ROOT })

  await check('spawn + wait: exit code, stdout, stderr', async () => {
    const h = await pm.spawn("printf 'out-1\\n'; printf 'err-1\\n' >&2; exit 3")
    assert.match(h.pid, /^\d+$/)
    const r = await h.wait()
    assert.equal(r.exitCode, 3)
    assert.equal(r.success, false)
    assert.equal(r.stdout, 'out-1\n')
    assert.equal(r.stderr, 'err-1\n')
  })

  await check('exec argv (no shell) + output()', async () => {
    const p = await pm.exec(['sh', '-c', 'printf "%s|%s" "$0" "$PWD"', 'two words'], { cwd: '/' })
    const out = await p.output({ encoding: 'utf8' })
    assert.equal(out.exitCode, 0)
    assert.equal(out.stdout, 'two words|/')
  })

  await check('kill ends the process and its grandchild; both are gone', async () => {
    let text = ''
    const h = await pm.spawn('sleep 30 & echo $!; wait', { onStdout: (d) => (text += d) })
    assert.ok(await eventually(() => /^\d+\n/.test(text)), 'the grandchild pid was printed')
    const child = Number(h.pid)
    const grandchild = Number(text.trim())
    assert.ok(alive(child) && alive(grandchild), 'both run before the kill')
    assert.equal(await h.kill(), true)
    const r = await h.wait()
    assert.equal(r.exitCode, 128)
    assert.equal(r.killed, true)
    assert.ok(await eventually(() => !alive(child) && !alive(grandchild)), 'both are gone after the kill')
    assert.ok(await eventually(() => pv.liveProcessCount() === 0), `liveProcessCount() is ${pv.liveProcessCount()}`)
  })

  await check('typed errors from the installed package', async () => {
    await assert.rejects(pm.spawn('true', { cwd: path.join(ROOT, 'missing-dir') }), (err) => {
      assert.ok(err instanceof pv.InvalidProcessCwdError)
      assert.equal(err.code, 'INVALID_PROCESS_CWD')
      return true
    })
  })

  await check('close() leaves nothing running', async () => {
    const h = await pm.spawn('sleep 30')
    await pm.close()
    assert.ok(await eventually(() => !alive(Number(h.pid))))
    assert.equal(pv.liveProcessCount(), 0)
  })

  await check('the addon and every procvisor module come from this project, none from the checkout', () => {
    assertProvenance()
  })
}

main().then(finish, (err) => {
  console.log(`not ok - consumer crashed: ${err && err.stack}`)
  process.exitCode = 1
})
