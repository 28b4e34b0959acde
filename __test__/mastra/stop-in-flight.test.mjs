// stop() and destroy() while spawns are still launching: every process that a spawn in flight
// starts is ended too, on every backend, so nothing outlives the sandbox.
import { after, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { createRequire } from 'node:module'
import { BACKENDS, end } from './backends.mjs'
import { eventually, sleep, tempDir } from './helpers.mjs'

const { markedPids } = createRequire(import.meta.url)('../helpers.js')
const made = []
after(async () => {
  for (const sb of made) await end(sb)
})

for (const backend of BACKENDS.filter((b) => b.native)) {
  describe(backend.title, { timeout: 60_000 }, () => {
    for (const how of ['stop', 'destroy']) {
      it(`${how}() with 20 spawns in flight leaves nothing alive`, async () => {
        const marker = `in-flight-${backend.name}-${how}-${process.pid}`
        const sb = backend.make({ workingDirectory: tempDir('procvisor-in-flight-'), env: { PATH: process.env.PATH, PROCVISOR_MARKER: marker } })
        made.push(sb)
        await sb.start()
        const spawns = Array.from({ length: 20 }, () => sb.processes.spawn('sleep 300').then((h) => h, (e) => e))
        // Past the sandbox's own checks, into the launch (a spawn that has not reached it yet
        // starts the sandbox again after the stop, as Mastra's spawn does on a stopped sandbox).
        await new Promise((r) => setImmediate(r))
        await (how === 'stop' ? sb.stop() : sb._destroy())
        const settled = await Promise.all(spawns)
        // A spawn either started a process that the stop then ended, or was refused.
        for (const s of settled) if (!(s instanceof Error)) assert.match(String(s.pid), /^\d+$/)
        const left = await eventually(() => markedPids(marker).length === 0, 5000)
        assert.ok(left, `alive after ${how}(): ${markedPids(marker).join(' ')}`)
        await sleep(300)
        assert.deepEqual(markedPids(marker), [], 'and none appears later')
      })
    }
  })
}
