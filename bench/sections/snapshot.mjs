// 6: checkpoints of a working tree. A generated tree (by default 16,160 files and about 265 MB:
// many small sources and a few 1 MiB blobs, in nested directories, with empty directories and
// symlinks, the same bytes every run) is captured and restored by NativeLocalSandbox (procvisor's
// native copier), by Mastra's LocalSandbox (Node's fs.cp) and by `cp -a`, interleaved over
// rounds in a rotated order.
//
// Capture: `snapshot()` of a sandbox on the tree (Mastra's protocol for both: copy to a temporary
// sibling, rename into place), and `cp -a tree dest`. Restore: `start()` of a sandbox whose
// working directory is missing (restored from the checkpoint), and `mkdir dest && cp -a ckpt/. dest`;
// all three restore the same checkpoint. Outputs are set aside between runs and removed at the
// end (lib/discard.mjs: removing one just before the next contender made it pay for the removal).
//
// Then checkpoints that cost what changed: captures that share unchanged files, and restores in
// place (checkpoints-incremental.mjs).
//
// Page cache: before every run the bench syncs, so no contender pays for another's writeback; as
// root it also drops the caches (echo 3 > /proc/sys/vm/drop_caches), so each contender reads the
// tree from disk ("cold"). Without root (or with BENCH_SNAPSHOT_CACHE=warm) the source is read
// once before each run instead, so each reads it from memory ("warm"). The state is reported with
// the figures.

import { execFile } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { performance } from 'node:perf_hooks'
import { promisify } from 'node:util'
import { median, rotate } from '../lib/stats.mjs'
import { discarder } from '../lib/discard.mjs'

const run = promisify(execFile)
const now = () => performance.now()
const threadCpuMs = () => (typeof process.threadCpuUsage === 'function' ? (({ user, system }) => (user + system) / 1000)(process.threadCpuUsage()) : NaN)

/** A deterministic byte stream (LCG), for file contents that differ from file to file. */
function pool(bytes) {
  const b = Buffer.alloc(bytes)
  let x = 0x2545f491
  for (let i = 0; i < bytes; i += 4) {
    x = (Math.imul(x, 1664525) + 1013904223) >>> 0
    b.writeUInt32LE(x, i)
  }
  return b
}

/** Writes the tree; the same tree for the same arguments. */
function generate(root, { small, big }) {
  const data = pool(8 << 20)
  let x = 12345
  const next = () => (x = (Math.imul(x, 1103515245) + 12345) >>> 0)
  let bytes = 0
  let links = 0
  const perDir = 80
  for (let i = 0; i < small; i++) {
    const dir = path.join(root, `pkg-${Math.floor(i / (perDir * 10)) % 1000}`, `mod-${Math.floor(i / perDir)}`, i % 3 === 0 ? 'lib' : 'src')
    if (i % perDir < 3) fs.mkdirSync(dir, { recursive: true })
    const size = 200 + (next() % 11800)
    const off = next() % (data.length - size)
    fs.writeFileSync(path.join(dir, `file-${i}.js`), data.subarray(off, off + size), { mode: i % 17 === 0 ? 0o755 : 0o644 })
    bytes += size
    if (i % 80 === 5) {
      fs.symlinkSync(`file-${i}.js`, path.join(dir, `alias-${i}.js`))
      links++
    }
    if (i % 320 === 7) fs.mkdirSync(path.join(dir, `empty-${i}`))
  }
  fs.mkdirSync(path.join(root, 'blobs'), { recursive: true })
  for (let i = 0; i < big; i++) {
    const off = next() % (data.length - (1 << 20))
    fs.writeFileSync(path.join(root, 'blobs', `blob-${i}.bin`), data.subarray(off, off + (1 << 20)))
    bytes += 1 << 20
  }
  return { files: small + big, bytes, links }
}

/** Files and bytes under `root` (links not followed), to check each contender copied everything. */
function measure(root) {
  let files = 0
  let bytes = 0
  let links = 0
  const walk = (dir) => {
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, e.name)
      if (e.isSymbolicLink()) links++
      else if (e.isDirectory()) walk(p)
      else {
        files++
        bytes += fs.lstatSync(p).size
      }
    }
  }
  walk(root)
  return { files, bytes, links }
}

async function dropCaches(cold, source) {
  await run('sync')
  if (cold) {
    try {
      fs.writeFileSync('/proc/sys/vm/drop_caches', '3\n')
      return true
    } catch {
      return false
    }
  }
  // Warm: the tree in memory for every contender alike.
  await run('sh', ['-c', 'find "$1" -type f -exec cat {} + > /dev/null', 'sh', source], { maxBuffer: 1 << 20 })
  return false
}

/**
 * @returns { state, tree: { files, bytes, links }, rounds, rows: [{ op, name, procvisor, secs: [], jsCpuMs: [] }], problems }
 */
export async function snapshotSection({ rounds, small, big, log }) {
  const { NativeLocalSandbox } = await import('procvisor/mastra')
  let LocalSandbox
  try {
    ;({ LocalSandbox } = await import('@mastra/core/workspace'))
  } catch (e) {
    log(`   Mastra LocalSandbox unavailable: ${e.message}`)
  }
  const base = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'procvisor-bench-snapshot-')))
  const discard = discarder(base)
  const tree = path.join(base, 'tree')
  const cps = path.join(base, 'checkpoints')
  const out = path.join(base, 'out')
  fs.mkdirSync(cps)
  const problems = []
  try {
    const g0 = now()
    const made = generate(tree, { small, big })
    log(`  tree: ${made.files.toLocaleString('en-US')} files, ${(made.bytes / 1e6).toFixed(0)} MB, ${made.links} symlinks (generated in ${((now() - g0) / 1000).toFixed(1)} s)`)
    // The checkpoint every contender restores, made once.
    await run('cp', ['-a', tree, path.join(cps, 'ref')])

    // As root the caches can be dropped before every run; if that fails once, every run is warm.
    // BENCH_SNAPSHOT_CACHE=warm measures the warm case as root too.
    let cold = process.getuid?.() === 0 && process.env.BENCH_SNAPSHOT_CACHE !== 'warm'
    if (cold && !(await dropCaches(true, tree))) cold = false

    const capture = [
      {
        name: 'procvisor NativeLocalSandbox.snapshot()',
        procvisor: true,
        run: () => new NativeLocalSandbox({ workingDirectory: tree, checkpointName: 'out', checkpointsDirectory: out }).snapshot(),
        result: path.join(out, 'out'),
      },
      LocalSandbox && {
        name: 'Mastra LocalSandbox.snapshot() (fs.cp)',
        run: () => new LocalSandbox({ workingDirectory: tree, checkpointName: 'out', checkpointsDirectory: out }).snapshot(),
        result: path.join(out, 'out'),
      },
      { name: 'cp -a', run: () => run('cp', ['-a', tree, path.join(out, 'out')]), result: path.join(out, 'out'), before: () => fs.mkdirSync(out) },
    ].filter(Boolean)
    const restore = [
      {
        name: 'procvisor NativeLocalSandbox start() (restore)',
        procvisor: true,
        run: async () => {
          const sb = new NativeLocalSandbox({ workingDirectory: out, checkpointName: 'ref', checkpointsDirectory: cps })
          await sb._start()
          return () => sb._stop()
        },
        result: out,
      },
      LocalSandbox && {
        name: 'Mastra LocalSandbox start() (restore, fs.cp)',
        run: async () => {
          const sb = new LocalSandbox({ workingDirectory: out, checkpointName: 'ref', checkpointsDirectory: cps })
          await sb._start()
          return () => sb._stop()
        },
        result: out,
      },
      { name: 'cp -a (restore)', run: () => run('sh', ['-c', 'mkdir "$2" && cp -a "$1/." "$2"', 'sh', path.join(cps, 'ref'), out]), result: out },
    ].filter(Boolean)

    const rows = []
    for (const [op, contenders] of [
      ['capture', capture],
      ['restore', restore],
    ]) {
      const acc = new Map(contenders.map((c) => [c, { secs: [], jsCpuMs: [] }]))
      for (let r = 0; r < rounds; r++) {
        for (const c of rotate(contenders, r)) {
          discard(out)
          c.before?.()
          await dropCaches(cold, op === 'capture' ? tree : path.join(cps, 'ref'))
          const cpu0 = threadCpuMs()
          const t0 = now()
          const after = await c.run()
          const secs = (now() - t0) / 1000
          const cpu = threadCpuMs() - cpu0
          if (typeof after === 'function') await after()
          if (r === 0) {
            const got = measure(c.result)
            if (got.files !== made.files || got.bytes !== made.bytes || got.links !== made.links) {
              problems.push(`${op} by ${c.name}: ${JSON.stringify(got)} instead of ${JSON.stringify(made)}`)
            }
          }
          acc.get(c).secs.push(secs)
          // cp -a works in a child process: the JS thread's CPU says nothing about it.
          acc.get(c).jsCpuMs.push(c.name.startsWith('cp') ? NaN : cpu)
          log(`  ${op.padEnd(7)} round ${r + 1}  ${c.name.padEnd(46)} ${secs.toFixed(2).padStart(6)} s`)
        }
      }
      for (const c of contenders) rows.push({ op, name: c.name, procvisor: Boolean(c.procvisor), cp: c.name.startsWith('cp -a'), ...acc.get(c) })
    }
    for (const op of ['capture', 'restore']) {
      const rs = rows.filter((x) => x.op === op)
      const pv = rs.find((x) => x.procvisor)
      for (const x of rs) {
        if (x === pv) continue
        const per = x.secs.map((s, i) => s / pv.secs[i])
        log(`  ${op}: ${x.name} ÷ procvisor = ${median(per).toFixed(2)}× (${Math.min(...per).toFixed(2)}–${Math.max(...per).toFixed(2)})`)
      }
    }
    // Checkpoints that cost what changed, on the same tree (checkpoints-incremental.mjs).
    const { incrementalSection } = await import('./checkpoints-incremental.mjs')
    const incremental = await incrementalSection({ NativeLocalSandbox, tree, base, rounds: rounds + 2, cold, dropCaches, measure, problems, log, discard })
    return { state: cold ? 'cold' : 'warm', tree: made, rounds, rows, problems, incremental, outputsKept: discard.keeps }
  } finally {
    await run('chmod', ['-R', 'u+rwX', base]).catch(() => {})
    fs.rmSync(base, { recursive: true, force: true })
  }
}
