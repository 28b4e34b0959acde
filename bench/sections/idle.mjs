// 5a: memory per tracked idle process: each contender in a fresh Node process
// (bench/children/idle-child.mjs) tracks `n` sleeps, RSS delta / n; the limit does the same with
// std::process::Child values. Every run checks that its sleeps are gone afterwards.

import { execFile } from 'node:child_process'
import path from 'node:path'
import { BENCH, runLimit, findProcesses } from '../lib/setup.mjs'
import { median, rotate } from '../lib/stats.mjs'

export const IDLE_CONTENDERS = [
  { key: 'procvisor-exec', name: "procvisor exec(['sleep', …])", procvisor: true },
  { key: 'procvisor-spawn', name: "procvisor spawn('sleep …')", procvisor: true },
  { key: 'child_process', name: 'child_process.spawn' },
  { key: 'execa', name: 'execa' },
  { key: 'tinyexec', name: 'tinyexec' },
  { key: 'mastra', name: "Mastra LocalSandbox spawn('sleep …')" },
  { key: 'limit', name: 'limit (Rust std::process::Child)', limit: true },
]

let serial = 0

function child(key, n, tag) {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, ['--expose-gc', path.join(BENCH, 'children', 'idle-child.mjs'), key, String(n), tag], { maxBuffer: 1 << 20, timeout: 120_000 }, (err, stdout, stderr) => {
      if (err) return reject(new Error(`idle child ${key} failed: ${err.message}\n${stderr}`))
      resolve(JSON.parse(stdout.trim().split('\n').pop()))
    })
  })
}

/** @returns rows: { key, name, procvisor, limit, perProcessBytes, spawnSecs, leftAfterKill } */
export async function idleSection({ n, rounds, log, skipMastra }) {
  const list = IDLE_CONTENDERS.filter((c) => !(skipMastra && c.key === 'mastra'))
  const acc = new Map(list.map((c) => [c, []]))
  for (let r = 0; r < rounds; r++) {
    for (const c of rotate(list, r)) {
      const tag = `60.${String(process.pid % 1000).padStart(3, '0')}${String(++serial).padStart(3, '0')}`
      let res
      if (c.limit) {
        const j = await runLimit(['idle', n, 'sleep', tag])
        res = { perProcessBytes: j.perProcessBytes, spawnSecs: undefined, leftAfterKill: findProcesses(['sleep', tag]).length }
      } else {
        res = await child(c.key, n, tag)
      }
      acc.get(c).push(res)
    }
  }
  return list.map((c) => {
    const rs = acc.get(c)
    const row = {
      key: c.key,
      name: c.name,
      procvisor: Boolean(c.procvisor),
      limit: Boolean(c.limit),
      perProcessBytes: median(rs.map((x) => x.perProcessBytes)),
      spawnSecs: rs[0].spawnSecs === undefined ? undefined : median(rs.map((x) => x.spawnSecs)),
      leftAfterKill: Math.max(...rs.map((x) => x.leftAfterKill)),
    }
    log(`  ${row.name.padEnd(38)} ${(row.perProcessBytes / 1024).toFixed(1).padStart(7)} KB per idle process${row.leftAfterKill ? `  LEFT ${row.leftAfterKill} ALIVE` : ''}`)
    return row
  })
}
