// Turns the sections' rows into the printed tables, the performance targets (each a ratio measured
// in this run, met or missed), and bench/RESULTS.md.

import { fmt, median, ratio, table } from './stats.mjs'
import { incrementalTables, incrementalTargets } from './report-checkpoints.mjs'

const us = (x) => fmt(x, x !== undefined && x < 100 ? 1 : 0)
const ms = (x) => (x === undefined ? 'n/a' : fmt(x / 1000, 2))
const verdict = (ok) => (ok === undefined ? 'n/a' : ok ? 'met' : 'MISSED')

function spawnTables(rows) {
  const out = []
  const groups = [...new Set(rows.map((r) => `${r.form}|${r.mode}`))]
  for (const g of groups) {
    const [form, mode] = g.split('|')
    const rs = rows.filter((r) => r.form === form && r.mode === mode)
    const main = rs.find((r) => r.procvisor)
    out.push(`**${form}, ${mode}** (${rs[0].n} spawns per contender, medians over rounds)\n`)
    out.push(
      table(
        ['contender', 'spawns/s', 'latency p50 ms', 'latency p99 ms', 'spawn call p50 µs', 'spawn call p99 µs', 'JS thread CPU µs/spawn', `${main.name} ÷ this (spawns/s)`],
        rs.map((r) => [r.name, fmt(r.perSec, 0), ms(r.latP50), ms(r.latP99), us(r.syncP50), us(r.syncP99), r.limit ? '—' : us(r.jsCpuUsPerSpawn), r === main ? '—' : ratio(main.perSec, r.perSec)]),
      ),
    )
    out.push('')
  }
  return out.join('\n')
}

function heapTable(heap) {
  const names = heap[0].results.map((r) => r.name)
  const header = ['contender', ...heap.flatMap((h) => [`${h.gib} GiB: latency p50 ms`, `${h.gib} GiB: spawn call p50 µs`]), `latency ${heap.at(-1).gib} GiB ÷ ${heap[0].gib} GiB`]
  const rows = names.map((name) => {
    const per = heap.map((h) => h.results.find((r) => r.name === name))
    return [name, ...per.flatMap((r) => [ms(r.latP50), us(r.syncP50)]), ratio(per.at(-1).latP50, per[0].latP50)]
  })
  const sizes = heap.map((h) => `${h.gib} GiB: ${h.nProcvisor ?? h.n} spawns per procvisor face, ${h.n} for child_process, RSS ${fmt(h.rssMiB, 0)} MiB`).join('; ')
  return `${sizes}\n\n${table(header, rows)}\n`
}

function outputTables(rows, workloads) {
  const out = []
  for (const key of [...new Set(rows.map((r) => r.workload))]) {
    const rs = rows.filter((r) => r.workload === key)
    const cb = rs.find((r) => r.name === 'procvisor onStdout')
    const rd = rs.find((r) => r.name === 'procvisor reader')
    out.push(`**${workloads[key].title}**\n`)
    const header = ['contender', 'MB/s', 'CPU s (reader side)', 'wall s', 'procvisor onStdout ÷ this (MB/s)']
    if (rd) header.push('procvisor reader ÷ this (MB/s)')
    out.push(
      table(
        header,
        rs.map((r) => {
          const row = [r.problem && r.mbps === undefined ? `${r.name} (failed: ${r.problem})` : r.name, fmt(r.mbps, 0), fmt(r.cpu, 2), fmt(r.secs, 2), r === cb ? '—' : ratio(cb?.mbps, r.mbps)]
          if (rd) row.push(r === rd ? '—' : ratio(rd.mbps, r.mbps))
          return row
        }),
      ),
    )
    out.push('')
  }
  return out.join('\n')
}

function idleTable(rows) {
  const cpRow = rows.find((r) => r.key === 'child_process')
  return table(
    ['contender', 'KB per idle process', 'time to spawn them s', 'this ÷ child_process', 'left alive after kill'],
    rows.map((r) => [r.name, fmt(r.perProcessBytes / 1024, 1), fmt(r.spawnSecs, 2), ratio(r.perProcessBytes, cpRow.perProcessBytes), String(r.leftAfterKill)]),
  )
}

function lagTable(lag) {
  return `Idle-loop baseline of the sampler: p50 ${fmt(lag.baseline.p50, 3)} ms, p99 ${fmt(lag.baseline.p99, 3)} ms. ${lag.procs} processes × ${fmt(lag.perProcessBytes / 1e6, 0)} MB each through the output callback, each contender in its own Node process; a 1 ms timer chain samples the lag (few samples = the loop was blocked for long stretches).\n\n${table(
    ['contender', 'lag p50 ms', 'lag p99 ms', 'lag max ms', 'timer samples', 'all done in s', 'total MB/s', 'bytes lost'],
    lag.rows.map((r) => [r.name, fmt(r.lagP50, 2), fmt(r.lagP99, 2), fmt(r.lagMax, 1), fmt(r.samples, 0), fmt(r.secs, 2), fmt(r.mbps, 0), fmt(r.lostBytes, 0)]),
  )}\n`
}

/** Per-round ratios of `x` to procvisor's run in the same round: { med, min, max }. */
function perRound(x, pv) {
  const r = x.secs.map((s, i) => s / pv.secs[i]).filter(Number.isFinite)
  if (r.length === 0) return undefined
  const sortedR = [...r].sort((a, b) => a - b)
  return { med: sortedR[Math.floor((sortedR.length - 1) / 2)], min: sortedR[0], max: sortedR.at(-1) }
}

const spread = (q) => (q ? `${fmt(q.med, 2)}× (${fmt(q.min, 2)}–${fmt(q.max, 2)})` : 'n/a')

/** a[i] ÷ b[i] for each round both have: median, min and max (undefined without any). */
function roundRatios(a, b) {
  if (!a || !b) return undefined
  const r = a.map((x, i) => x / b[i]).filter(Number.isFinite).sort((x, y) => x - y)
  if (r.length === 0) return undefined
  return { med: r[Math.floor((r.length - 1) / 2)], min: r[0], max: r.at(-1) }
}

/** " (per round min–max)" after a ratio of medians, so host noise can be told from a difference. */
const rounds = (q) => (q ? ` (per round ${fmt(q.min, 2)}–${fmt(q.max, 2)})` : '')

function snapshotState(snap) {
  return snap.state === 'cold'
    ? 'cold: `sync` and the page cache dropped (`echo 3 > /proc/sys/vm/drop_caches`) before every run, so each contender read the tree from disk'
    : 'warm: `sync` before every run and the source read into the page cache first (not root, or BENCH_SNAPSHOT_CACHE=warm)'
}

function snapshotTables(snap) {
  const out = [
    `Tree: ${fmt(snap.tree.files, 0)} files, ${fmt(snap.tree.bytes / 1e6, 0)} MB, ${snap.tree.links} symlinks, nested directories and empty ones; ${snap.rounds} rounds, contenders interleaved. Page cache ${snapshotState(snap)}. ${snap.outputsKept ? 'Outputs were set aside and removed after the section: on ext4 without a journal a removal makes every create of the next 30 s skip the freed inodes, a cost of the bench, not of the next contender.' : 'Outputs were removed between runs (under 16 GiB free): on ext4 without a journal each contender then pays for the previous removal at every file it makes.'}`,
    '',
  ]
  if (snap.problems?.length) out.push(`Incomplete copies: ${snap.problems.join('; ')}`, '')
  for (const op of ['capture', 'restore']) {
    const rs = snap.rows.filter((r) => r.op === op)
    const pv = rs.find((r) => r.procvisor)
    const secs = (r) => [...r.secs].sort((a, b) => a - b)
    out.push(`**${op === 'capture' ? 'Capture (working tree → checkpoint)' : 'Restore (checkpoint → empty working directory)'}**
`)
    out.push(
      table(
        ['contender', 'median s', 'min–max s', 'MB/s', 'files/s', 'JS thread CPU ms', 'this ÷ procvisor, per round (median, min–max)'],
        rs.map((r) => {
          const m = median(r.secs)
          return [
            r.name,
            fmt(m, 2),
            `${fmt(secs(r)[0], 2)}–${fmt(secs(r).at(-1), 2)}`,
            fmt(snap.tree.bytes / 1e6 / m, 0),
            fmt(snap.tree.files / m, 0),
            r.jsCpuMs.every((x) => !Number.isFinite(x)) ? '—' : fmt(median(r.jsCpuMs), 0),
            r === pv ? '—' : spread(perRound(r, pv)),
          ]
        }),
      ),
    )
    out.push('')
  }
  if (snap.incremental) out.push(incrementalTables(snap.incremental))
  return out.join('\n')
}

/** The performance targets, each evaluated on this run's numbers. */
/** Section 8: persistent ÷ local per workload, median and spread over rounds. */
function persistentTable(rows) {
  const spread = (s) => (s ? `${fmt(s.ratio, 3)}× (${fmt(s.min, 3)}–${fmt(s.max, 3)}, ${s.rounds} rounds)` : '')
  return table(
    ['workload', 'local', 'persistent', 'persistent ÷ local (median, min–max over rounds)', 'persistent, output as bytes', 'as bytes ÷ local'],
    rows.map((r) => {
      const base = { local: '', bytes: 'as bytes: ', localLogs: 'local with log files: ' }[r.baseName] ?? ''
      return [r.title, `${base}${fmt(r.local)}`, fmt(r.persistent), spread(r), r.bytes === null ? '' : fmt(r.bytes), spread(r.asBytes)]
    }),
  )
}

/**
 * What a persistent sandbox must reach, as a share of the local one (the supervisor's CPU per
 * MiB: at most this share of what it costs with output sent as bytes).
 */
const PERSISTENT_TARGETS = { spawn: 0.8, spawn16: 0.9, listener: 0.9, logs: 0.9, supervisorCpu: 0.5 }

export function targets(res) {
  const out = []
  const sp = (form, inflight, pred) => res.spawn?.find((r) => r.form.startsWith(form) && r.inflight === inflight && pred(r))
  for (const [form, label, pvName] of [
    ['/bin/true', '/bin/true argv', 'procvisor exec(argv)'],
    ['sh -c', 'sh -c true', "procvisor spawn('true')"],
  ]) {
    for (const k of [1, 16]) {
      const pv = sp(form, k, (r) => r.name === pvName)
      const lim = sp(form, k, (r) => r.limit)
      const cpR = sp(form, k, (r) => r.name === 'child_process.spawn')
      const ex = sp(form, k, (r) => r.name.startsWith('execa'))
      if (!pv) continue
      const where = `${label}, ${k === 1 ? '1 at a time' : `${k} in flight`}`
      const per = (o) => rounds(roundRatios(pv.perSecRounds, o?.perSecRounds))
      out.push([`spawn throughput ≥ 85% of the limit (${where})`, `${pvName} ÷ limit = ${ratio(pv.perSec, lim?.perSec)}${per(lim)}`, verdict(lim ? pv.perSec / lim.perSec >= 0.85 : undefined)])
      out.push([`spawn throughput ≥ 2× child_process (${where})`, `${ratio(pv.perSec, cpR?.perSec)}${per(cpR)}`, verdict(cpR ? pv.perSec / cpR.perSec >= 2 : undefined)])
      out.push([`spawn throughput ≥ 3.5× execa (${where})`, `${ratio(pv.perSec, ex?.perSec)}${per(ex)}`, verdict(ex ? pv.perSec / ex.perSec >= 3.5 : undefined)])
      const groups = sp(form, k, (r) => r.name === `${pvName}, process groups only`)
      if (groups) {
        out.push([`spawn throughput with a cgroup per tree within 15% of without (${where})`, `${ratio(pv.perSec, groups.perSec)}${per(groups)}`, verdict(pv.perSec / groups.perSec >= 0.85)])
      }
    }
  }
  for (const [form, pvName] of [
    ['/bin/true', 'procvisor exec(argv)'],
    ['sh -c', "procvisor spawn('true')"],
  ]) {
    const pv = sp(form, 1, (r) => r.name === pvName)
    const pv16 = sp(form, 16, (r) => r.name === pvName)
    const cpR = sp(form, 1, (r) => r.name === 'child_process.spawn')
    if (!pv) continue
    out.push([
      `≤ 35 µs of event loop blocked per spawn call (${pvName})`,
      `spawn call p50 ${us(pv.syncP50)} µs at 1 at a time, ${us(pv16?.syncP50)} µs at 16 in flight (child_process ${us(cpR?.syncP50)} µs). All JS-thread CPU per spawn, completion included: ${us(pv.jsCpuUsPerSpawn)} µs (child_process ${us(cpR?.jsCpuUsPerSpawn)})`,
      verdict(pv.syncP50 <= 35 && (pv16 === undefined || pv16.syncP50 <= 35)),
    ])
  }
  if (res.heap?.length >= 2) {
    const first = res.heap[0]
    const last = res.heap.at(-1)
    for (const name of ['procvisor exec(argv)', "procvisor spawn('true')"]) {
      const a = first.results.find((r) => r.name === name)
      const b = last.results.find((r) => r.name === name)
      const c0 = first.results.find((r) => r.name === 'child_process.spawn')
      const c1 = last.results.find((r) => r.name === 'child_process.spawn')
      if (!a || !b) continue
      const rr = b.latP50 / a.latP50
      out.push([
        `spawn latency within ±20% from ${first.gib} GiB to ${last.gib} GiB (${name})`,
        `${ms(a.latP50)} → ${ms(b.latP50)} ms = ${ratio(b.latP50, a.latP50)} (child_process ${ms(c0?.latP50)} → ${ms(c1?.latP50)} ms = ${ratio(c1?.latP50, c0?.latP50)})`,
        verdict(rr >= 0.8 && rr <= 1.2),
      ])
    }
  }
  const bulk = res.output?.filter((r) => r.workload === 'bulk') || []
  const cpB = bulk.find((r) => r.name === "child_process 'data'")
  const limB = bulk.find((r) => r.limit)
  for (const name of ['procvisor onStdout', 'procvisor reader']) {
    const pv = bulk.find((r) => r.name === name)
    if (!pv) continue
    out.push([`1 GiB to JS at least as fast as child_process (${name})`, `${fmt(pv.mbps, 0)} vs ${fmt(cpB?.mbps, 0)} MB/s = ${ratio(pv.mbps, cpB?.mbps)}${rounds(roundRatios(pv.mbpsRounds, cpB?.mbpsRounds))}`, verdict(pv.mbps !== undefined && cpB ? pv.mbps >= cpB.mbps : pv.mbps === undefined ? false : undefined)])
    out.push([`1 GiB to JS for no more reader CPU than child_process (${name})`, `${fmt(pv.cpu, 2)} vs ${fmt(cpB?.cpu, 2)} s = ${ratio(pv.cpu, cpB?.cpu)}${rounds(roundRatios(pv.cpuRounds, cpB?.cpuRounds))}`, verdict(pv.cpu !== undefined && cpB?.cpu !== undefined ? pv.cpu <= cpB.cpu : pv.cpu === undefined ? false : undefined)])
    out.push([`1 GiB to JS ≥ 60% of the Rust pipe limit (${name})`, `${ratio(pv.mbps, limB?.mbps)} (CPU ${fmt(pv.cpu, 2)} s vs the limit's ${fmt(limB?.cpu, 2)} s)`, verdict(pv.mbps !== undefined && limB ? pv.mbps / limB.mbps >= 0.6 : pv.mbps === undefined ? false : undefined)])
  }
  if (res.idle) {
    const cpI = res.idle.find((r) => r.key === 'child_process')
    for (const r of res.idle.filter((x) => x.procvisor)) {
      out.push([`memory per idle process ≤ child_process's (${r.name})`, `${fmt(r.perProcessBytes / 1024, 1)} KB vs ${fmt(cpI.perProcessBytes / 1024, 1)} KB = ${ratio(r.perProcessBytes, cpI.perProcessBytes)}`, verdict(r.perProcessBytes <= cpI.perProcessBytes)])
    }
  }
  if (res.lag) {
    const pv = res.lag.rows.find((r) => r.procvisor)
    const cpL = res.lag.rows.find((r) => r.name === "child_process 'data'")
    const lost = pv.lostBytes ? `; procvisor's listeners also lost ${fmt(pv.lostBytes, 0)} bytes` : ''
    out.push([`lag p99 while ${res.lag.procs} processes stream < child_process's`, `${fmt(pv.lagP99, 2)} vs ${fmt(cpL.lagP99, 2)} ms = ${ratio(pv.lagP99, cpL.lagP99)}${lost}`, verdict(pv.lagP99 < cpL.lagP99)])
  }
  if (res.snapshot) {
    const state = res.snapshot.state
    for (const op of ['capture', 'restore']) {
      const rs = res.snapshot.rows.filter((r) => r.op === op)
      const pv = rs.find((r) => r.procvisor)
      const cp = perRound(rs.find((r) => r.cp) || { secs: [] }, pv)
      const mastraRow = rs.find((r) => !r.procvisor && !r.cp)
      const ms = mastraRow && perRound(mastraRow, pv)
      // cp ÷ procvisor < 1 means procvisor is slower; within 1.5× means procvisor ÷ cp ≤ 1.5.
      const pvOverCp = cp && { med: 1 / cp.med, min: 1 / cp.max, max: 1 / cp.min }
      out.push([`full checkpoint ${op} ≤ 0.6× \`cp -a\` (${state} cache)`, `procvisor ÷ cp -a = ${spread(pvOverCp)}`, verdict(pvOverCp ? pvOverCp.med <= 0.6 : undefined)])
      out.push([`checkpoint ${op} faster than Mastra's LocalSandbox in every round (${state} cache)`, `Mastra ÷ procvisor = ${spread(ms)}`, verdict(ms ? ms.min > 1 : undefined)])
    }
    out.push(...incrementalTargets(res.snapshot))
  }
  for (const r of res.persistent || []) {
    const want = PERSISTENT_TARGETS[r.key]
    if (want === undefined) continue
    const most = r.baseName === 'bytes'
    const what = most ? `persistent sandbox's supervisor ≤ ${want}× its CPU with output as bytes: ${r.title}` : `persistent sandbox ≥ ${want}× the local one: ${r.title}`
    out.push([what, `${fmt(r.ratio, 3)}× (${fmt(r.min, 3)}–${fmt(r.max, 3)})`, verdict(most ? r.ratio <= want : r.ratio >= want)])
  }
  return out
}

export function markdown(res, { workloads }) {
  const m = res.machine
  const lines = []
  lines.push('# procvisor benchmarks, side by side')
  lines.push('')
  lines.push(
    `Generated by \`${res.command}\`${res.command === 'npm run bench' ? ' (= `npm run build && node scripts/node22.js bench/run.mjs`)' : ''} on ${res.date}; the whole run took ${fmt(res.totalSecs, 0)} s${res.command === 'npm run bench' ? ' including the release build' : ''} (the bench itself ${fmt(res.benchSecs, 0)} s).`,
  )
  lines.push('')
  lines.push(`- Machine: ${m.cpu}, ${m.cores} cores, ${m.memGiB} GiB RAM, ${m.kernel}${m.glibc ? `, glibc ${m.glibc}` : ''}`)
  lines.push(`- Node ${m.node}; load average at start ${m.loadavg}, at end ${res.loadEnd}${res.stealSecs !== undefined ? `; CPU time stolen by the hypervisor during the run: ${fmt(res.stealSecs, 1)} s` : ''} (a shared VM: other work on the machine shows up as noise, which the interleaving spreads over all contenders)`)
  if (res.abRun) lines.push(`- A/B run: JS package ${res.abRun.root || '(this checkout)'}, addon ${res.abRun.addon || '(this checkout, release)'}`)
  lines.push(`- procvisor addon: release build \`${res.addon.path}\`${res.addon.builtAt ? ` (built ${res.addon.builtAt})` : ''}, loaded from a private copy`)
  lines.push(`- Libraries compared: execa ${res.versions.execa}, tinyexec ${res.versions.tinyexec}, @mastra/core ${res.versions.mastra} (LocalSandbox → LocalProcessManager, which runs execa with \`shell: true, detached: true\`)`)
  lines.push('- The limit: `bench/limit`, a dependency-free Rust program doing the same work with `std::process` (posix_spawn) and plain blocking reads.')
  lines.push('- Each section runs in a fresh Node process. Every child gets the same environment (PATH only). Contenders are interleaved: each round runs every contender once, in a rotated order; numbers are medians over rounds. Ratios are procvisor ÷ the other contender.')
  if (res.busyBefore) lines.push(`- CPU in use by other work just before each section (before each section the bench waits, up to 90 s and 180 s in all, for others to use < 25%): ${Object.entries(res.busyBefore).map(([k, v]) => `${k.split('.')[0]}: ${v === undefined ? 'n/a' : `${(v * 100).toFixed(0)}%`}`).join(', ')}`)
  if (res.mastraError) lines.push(`- Mastra's LocalSandbox could not run here (${res.mastraError}); its rows are missing.`)
  lines.push('')
  lines.push('## Targets')
  lines.push('')
  lines.push(table(['target', 'this run', 'verdict'], res.targets))
  lines.push('')
  if (res.spawn) {
    lines.push('## 1–2. Spawn until exit, and event-loop time per spawn')
    lines.push('')
    lines.push('"spawn call" is the synchronous wall time of the call that starts the process (the event loop is blocked for it; on 2 busy cores it includes preemption). "JS thread CPU" is the main thread\'s CPU time over a batch ÷ spawns (process.threadCpuUsage): everything the event loop spent per spawn, completion included. Mastra\'s manager spawns after an `await`, so its spawn call is not separable (n/a); its JS thread CPU counts it.')
    lines.push('')
    lines.push(spawnTables(res.spawn))
  }
  if (res.heap) {
    lines.push('## 3. Spawn latency as the parent grows (Buffers allocated and touched; each size a Node process of its own, the sizes driven in turn over 10 rounds; procvisor\'s faces share their processes, child_process has its own, as its forks write-protect their parent\'s pages)')
    lines.push('')
    lines.push(heapTable(res.heap))
  }
  if (res.output) {
    lines.push('## 4. Output throughput to JS')
    lines.push('')
    lines.push('Each contender runs in its own Node process (one per contender, driven in interleaved rounds), so that no contender inherits another\'s heap or allocator state. "CPU s" is that process\'s user + system CPU during the run (all its threads), i.e. what reading costs; the producer\'s CPU is not in it. The limit reports its own getrusage.')
    lines.push('')
    lines.push(outputTables(res.output, workloads))
  }
  if (res.idle) {
    lines.push('## 5a. Memory per tracked idle process')
    lines.push('')
    lines.push(`${res.idleN} \`sleep\`s per contender, each contender in a fresh Node process (--expose-gc): RSS after (GC'd, settled) minus RSS before, ÷ ${res.idleN}. Then every sleep is killed through the contender's API and checked gone.`)
    lines.push('')
    lines.push(idleTable(res.idle))
    lines.push('')
  }
  if (res.lag) {
    lines.push('## 5b. Event-loop lag while processes stream output')
    lines.push('')
    lines.push(lagTable(res.lag))
  }
  if (res.snapshot) {
    lines.push('## 6. Checkpoints of a working tree')
    lines.push('')
    lines.push("NativeLocalSandbox's native copier (`snapshot()` and the restore in `start()`) against Mastra's LocalSandbox (the same calls, copying with Node's `fs.cp`) and `cp -a`. Each run copies into a fresh destination, removed afterwards outside the timing; all three restores read the same checkpoint. \"JS thread CPU\" is the main thread's CPU time during the copy (process.threadCpuUsage): procvisor copies on its own threads. Then, on the same tree, captures that share unchanged files with the last one and restores in place against full ones.")
    lines.push('')
    lines.push(snapshotTables(res.snapshot))
  }
  if (res.persistent) {
    lines.push('## 8. A persistent sandbox against a local one')
    lines.push('')
    lines.push('The same `NativeLocalSandbox` calls, with the processes in the bench\'s Node process (local) and under a persistent sandbox\'s supervisor over its Unix socket, interleaved over rounds. Ratios are taken within each round. A persistent sandbox writes log files by default; a process whose log is its end alone (`true`) makes none, one with output (`echo x`) makes one.')
    lines.push('')
    lines.push(persistentTable(res.persistent))
    lines.push('')
  }
  lines.push('## Clean-up')
  lines.push('')
  lines.push(res.leaks)
  lines.push('')
  return lines.join('\n')
}

export const render = { spawnTables, heapTable, outputTables, idleTable, lagTable, snapshotTables, persistentTable }
