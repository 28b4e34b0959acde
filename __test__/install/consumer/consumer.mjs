// An ES module application: import from 'procvisor', real processes, asserted results.
import * as path from 'node:path'
import { createRequire } from 'node:module'
import { fileURLToPath } from 'node:url'

const require = createRequire(import.meta.url)
const { check, finish, alive, eventually, assertProvenance, ROOT, assert } = require('./check.cjs')

let pv
let defaultExport
await check('import "procvisor" loads the installed package', async () => {
  pv = await import('procvisor')
  defaultExport = pv.default
  assert.equal(typeof pv.ProcessManager, 'function')
  assert.equal(pv.ProcessManager, defaultExport.ProcessManager, 'named and default exports share one instance')
  assert.equal(fileURLToPath(import.meta.resolve('procvisor')), path.join(ROOT, 'node_modules/procvisor/index.mjs'))
  assert.equal(fileURLToPath(import.meta.resolve('procvisor/mastra')), path.join(ROOT, 'node_modules/procvisor/mastra/index.mjs'))
})

if (pv) {
  const { ProcessManager, ProcessSpawnFailedError, liveProcessCount } = pv
  const pm = new ProcessManager({ env: { GREETING: 'hello from env' } })

  await check('spawn + wait with env and output listeners', async () => {
    const seen = []
    const h = await pm.spawn('echo "$GREETING"; exit 0', { onStdout: (d) => seen.push(d) })
    const r = await h.wait()
    assert.equal(r.exitCode, 0)
    assert.equal(r.success, true)
    assert.equal(r.stdout, 'hello from env\n')
    assert.equal(seen.join(''), 'hello from env\n')
  })

  await check('a timeout ends the whole group with 124', async () => {
    const h = await pm.spawn('sleep 30', { timeout: 200 })
    const r = await h.wait()
    assert.equal(r.exitCode, 124)
    assert.equal(r.timedOut, true)
    assert.ok(await eventually(() => !alive(Number(h.pid))), 'the process is gone')
  })

  await check('kill() through the manager: the process is gone', async () => {
    const p = await pm.exec(['sleep', '30'])
    assert.ok(alive(p.pid))
    await p.kill(9)
    const exit = await p.waitForExit()
    assert.equal(exit.signal, 9)
    assert.equal(exit.code, 137)
    assert.ok(await eventually(() => !alive(p.pid)))
  })

  await check('a missing program rejects with ProcessSpawnFailedError (ENOENT)', async () => {
    await assert.rejects(pm.exec(['procvisor-no-such-program']), (err) => {
      assert.ok(err instanceof ProcessSpawnFailedError)
      assert.equal(err.osCode, 'ENOENT')
      return true
    })
  })

  await pm.close()
  await check('nothing left running after close()', async () => {
    assert.ok(await eventually(() => liveProcessCount() === 0), `liveProcessCount() is ${liveProcessCount()}`)
  })
  await check('the addon and every procvisor module come from this project, none from the checkout', () => {
    assertProvenance({ resolved: [fileURLToPath(import.meta.resolve('procvisor'))] })
  })
}
finish()
