// One contender in its own Node process, driven over IPC by a section (bench/lib/workers.mjs), so
// that contenders measured in turn do not share a heap, malloc state or threads: a run of one
// would otherwise change the GC and allocator behaviour the next one meets.
//   { op: 'output', name, argv }          → { bytes, secs, cpu }
//   { op: 'lag', name, procs, bytesEach } → { p50, p99, max, samples, secs, mbps, lost }
//   { op: 'close' }                       → { leftBehind }, then exits

import { openContenders, outputContenders } from '../lib/contenders.mjs'
import { killLeftovers, sleep } from '../lib/setup.mjs'
import { lagTrial, outputTrial } from '../lib/trials.mjs'

const ctx = await openContenders()
const contenders = outputContenders(ctx, { tinyexecLines: true })
const byName = (name) => {
  const c = contenders.find((x) => x.name === name)
  if (!c) throw new Error(`no contender ${name} here${ctx.mastraError ? ` (Mastra: ${ctx.mastraError.message})` : ''}`)
  return c
}

process.on('message', async (m) => {
  try {
    let result
    if (m.op === 'output') result = await outputTrial(byName(m.name), m.argv)
    else if (m.op === 'lag') result = await lagTrial(byName(m.name), m.procs, m.bytesEach)
    else if (m.op === 'close') {
      await ctx.close()
      await sleep(100)
      process.send({ id: m.id, result: { leftBehind: killLeftovers() } }, () => process.exit(0))
      return
    } else throw new Error(`unknown op ${m.op}`)
    process.send({ id: m.id, result })
  } catch (e) {
    process.send({ id: m.id, error: String(e && e.message ? e.message : e).split('\n')[0] })
  }
})
process.send({ ready: true, mastraError: ctx.mastraError?.message })
