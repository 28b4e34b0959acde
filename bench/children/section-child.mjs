// Runs one bench section in a fresh Node process, so that no section's heap, threads or leftovers
// weigh on the next one (a long-lived process measurably slows later contenders: GC heuristics,
// a grown old space). Run by bench/run.mjs as `node section-child.mjs <section> <config JSON>`;
// progress goes to stderr, the result is the last line of stdout (JSON). Before exiting it checks
// that no process it started is still alive (procvisor's watchdog excepted).

import { killLeftovers, sleep } from '../lib/setup.mjs'

const [section, configJson] = process.argv.slice(2)
const config = JSON.parse(configJson)
const log = (s) => process.stderr.write(`${s}\n`)

async function needsContenders(fn) {
  const { openContenders } = await import('../lib/contenders.mjs')
  const ctx = await openContenders()
  if (ctx.mastraError) log(`   Mastra LocalSandbox unavailable: ${ctx.mastraError.message}`)
  try {
    const result = await fn(ctx)
    return { result, mastraError: ctx.mastraError?.message }
  } finally {
    await ctx.close()
  }
}

async function mastraAvailable() {
  try {
    await import('@mastra/core/workspace')
    return true
  } catch (e) {
    log(`   Mastra LocalSandbox unavailable: ${e.message}`)
    return false
  }
}

let out
switch (section) {
  case 'spawn': {
    const { spawnSection } = await import('../sections/spawn.mjs')
    out = await needsContenders((ctx) => spawnSection(ctx, { ...config, log }))
    break
  }
  case 'heap': {
    const { heapSection } = await import('../sections/heap.mjs')
    out = { result: await heapSection({ ...config, log }) }
    break
  }
  case 'output': {
    const { outputSection } = await import('../sections/output.mjs')
    const mastra = await mastraAvailable()
    const r = await outputSection({ ...config, mastra, log })
    out = { result: r.rows, leftBehindElsewhere: r.leftBehind }
    break
  }
  case 'idle': {
    const { idleSection } = await import('../sections/idle.mjs')
    out = { result: await idleSection({ ...config, skipMastra: !(await mastraAvailable()), log }) }
    break
  }
  case 'lag': {
    const { lagSection } = await import('../sections/lag.mjs')
    const mastra = await mastraAvailable()
    const r = await lagSection({ ...config, mastra, log })
    out = { result: r, leftBehindElsewhere: r.leftBehind }
    break
  }
  case 'snapshot': {
    const { snapshotSection } = await import('../sections/snapshot.mjs')
    out = { result: await snapshotSection({ ...config, log }) }
    break
  }
  case 'web': {
    const { webSection } = await import('../sections/web.mjs')
    out = { result: await webSection({ ...config, log }) }
    break
  }
  case 'terminal': {
    const { terminalSection } = await import('../sections/terminal.mjs')
    out = { result: await terminalSection({ ...config, log }) }
    break
  }
  case 'persistent': {
    const { persistentSection } = await import('../sections/persistent.mjs')
    out = { result: await persistentSection({ ...config, log }) }
    break
  }
  default:
    throw new Error(`unknown section ${section}`)
}

await sleep(200)
out.leftBehind = [...killLeftovers(), ...(out.leftBehindElsewhere || [])]
delete out.leftBehindElsewhere
process.stdout.write(`${JSON.stringify(out)}\n`)
process.exit(0)
