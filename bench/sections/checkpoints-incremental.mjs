// 6, continued: checkpoints that cost what changed, on the section's generated tree. Each round
// changes 1% of its small files and then, contenders interleaved in a rotated order:
//
// - capture: `checkpoints.capture()` of the sandbox, which shares every unchanged file with its
//   previous capture (hard links), against a full capture of the same tree (a sandbox with an
//   empty checkpoints directory: nothing to share). New disk use: the blocks of what only the new
//   checkpoint holds (files no other checkpoint links, its directories, its record) against all of
//   the full one's.
// - restore: after another 1% is changed, `checkpoints.restore()` rolls the tree back in place,
//   against `start()` of a sandbox whose working directory is missing (restored into an empty
//   directory, as in the restore table).
//
// Beside each pair, what the filesystem itself costs for the least such work could do, with
// standard tools, top-level directories four at a time (as procvisor's own threads): linking
// every file of the last capture into a new tree (`cp -al`: what any capture that shares files
// by hard links must at least do, comparing nothing), and reading the state of every working
// file (`find -printf`: what any restore in place must at least read to know what changed).
//
// The files a round's restore copied back are the next round's changes, so every capture copies
// exactly 1%. A capture vouches only for files last changed two seconds or more before it (their
// timestamps could not show a second change within the same tick), so each round waits that long
// after its changes, as an agent's edits and its next checkpoint are apart. Caches as in the rest of
// the section (`dropCaches`).

import fs from 'node:fs'
import path from 'node:path'
import { execFile } from 'node:child_process'
import { performance } from 'node:perf_hooks'
import { promisify } from 'node:util'
import { rotate } from '../lib/stats.mjs'

const sh = (script, ...args) => promisify(execFile)('sh', ['-c', script, 'sh', ...args], { maxBuffer: 1 << 20 })

/** Hard-links the tree at `from` into a new directory `to`, its top-level entries 4 at a time. */
const linkTree = (from, to) =>
  sh('mkdir "$2" && find "$1" -mindepth 1 -maxdepth 1 -print0 | xargs -0 -P4 -I{} cp -al {} "$2"/', from, to)

/** Reads the size and times of every entry under `root`, its top-level entries 4 at a time. */
const statTree = (root) =>
  sh('find "$1" -mindepth 1 -maxdepth 1 -print0 | xargs -0 -P4 -I{} find {} -printf "%s %T@ %C@\\n" > /dev/null', root)

const now = () => performance.now()
const SETTLE_MS = 2300

/** The generated tree's small files, in the order they were made. */
function smallFiles(root) {
  const out = []
  const walk = (dir) => {
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, e.name)
      if (e.isDirectory()) walk(p)
      else if (e.isFile() && /^file-\d+\.js$/.test(e.name)) out.push(p)
    }
  }
  walk(root)
  return out.sort((a, b) => Number(/file-(\d+)/.exec(a)[1]) - Number(/file-(\d+)/.exec(b)[1]))
}

/** Changes every 100th file from `offset`: 1% of them, each a few bytes longer. */
function change(files, offset, round) {
  let n = 0
  for (let i = offset % 100; i < files.length; i += 100, n++) fs.appendFileSync(files[i], `// round ${round}\n`)
  return n
}

/** Bytes on disk of what only this checkpoint holds: directories, files with one link, its record. */
function ownDiskBytes(checkpoints, name) {
  let bytes = fs.statSync(path.join(checkpoints, `.owner-${name}`)).blocks * 512
  const walk = (dir) => {
    bytes += fs.lstatSync(dir).blocks * 512
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, e.name)
      if (e.isDirectory()) walk(p)
      else {
        const st = fs.lstatSync(p)
        if (st.nlink === 1) bytes += st.blocks * 512
      }
    }
  }
  walk(path.join(checkpoints, name))
  return bytes
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms))

/**
 * @returns { rounds, files, changed, capture: { incremental: [], full: [], linkFloor: [] }, restore: { inPlace: [], full: [], statFloor: [] },
 *   disk: { incremental: [], full: [] }, newBytes: { capture: [], restore: [] } } (seconds, bytes; one entry per round)
 */
export async function incrementalSection({ NativeLocalSandbox, tree, base, rounds, cold, dropCaches, measure, problems, log, discard }) {
  const cps = path.join(base, 'incremental')
  const fullCps = path.join(base, 'full-capture')
  const out = path.join(base, 'restored')
  const linked = path.join(base, 'linked')
  const files = smallFiles(tree)
  const sb = new NativeLocalSandbox({ workingDirectory: tree, checkpointsDirectory: cps })
  const res = { rounds, files: files.length, changed: 0, capture: { incremental: [], full: [], linkFloor: [] }, restore: { inPlace: [], full: [], statFloor: [] }, disk: { incremental: [], full: [] }, newBytes: { capture: [], restore: [] } }
  // The previous capture every incremental one starts from, of a settled tree.
  await sleep(SETTLE_MS)
  await sb.checkpoints.capture('round-0')
  const timed = async (run) => {
    const t0 = now()
    const r = await run()
    return { secs: (now() - t0) / 1000, r }
  }
  for (let round = 1; round <= rounds; round++) {
    res.changed = change(files, round, round)
    await sleep(SETTLE_MS)
    const name = `round-${round}`
    const captures = [
      async () => {
        await dropCaches(cold, tree)
        const { secs, r } = await timed(() => sb.checkpoints.capture(name))
        res.capture.incremental.push(secs)
        res.newBytes.capture.push(r.newBytes)
        log(`  capture round ${round}  incremental (checkpoints.capture)          ${secs.toFixed(3).padStart(7)} s, ${(r.newBytes / 1e6).toFixed(1)} MB written`)
      },
      async () => {
        discard(fullCps)
        await dropCaches(cold, tree)
        const full = new NativeLocalSandbox({ workingDirectory: tree, checkpointsDirectory: fullCps })
        const { secs, r } = await timed(() => full.checkpoints.capture('full'))
        res.capture.full.push(secs)
        log(`  capture round ${round}  full (nothing to share)                   ${secs.toFixed(3).padStart(7)} s, ${(r.newBytes / 1e6).toFixed(1)} MB written`)
      },
      async () => {
        discard(linked)
        await dropCaches(cold, tree)
        const { secs } = await timed(() => linkTree(path.join(cps, `round-${round - 1}`), linked))
        res.capture.linkFloor.push(secs)
        log(`  capture round ${round}  floor: cp -al of the last capture, 4 at once ${secs.toFixed(3).padStart(7)} s`)
      },
    ]
    for (const c of rotate(captures, round)) await c()
    discard(linked)
    res.disk.incremental.push(ownDiskBytes(cps, name))
    res.disk.full.push(ownDiskBytes(fullCps, 'full'))
    discard(fullCps)
    await sb.checkpoints.delete(`round-${round - 1}`)

    // The next round's changes, rolled back here.
    change(files, round + 1, round)
    const restores = [
      async () => {
        await dropCaches(cold, tree)
        const { secs, r } = await timed(() => sb.checkpoints.restore(name))
        res.restore.inPlace.push(secs)
        res.newBytes.restore.push(r.newBytes)
        log(`  restore round ${round}  in place (checkpoints.restore)             ${secs.toFixed(3).padStart(7)} s, ${(r.newBytes / 1e6).toFixed(1)} MB written`)
      },
      async () => {
        discard(out)
        await dropCaches(cold, path.join(cps, name))
        const into = new NativeLocalSandbox({ workingDirectory: out, checkpointName: name, checkpointsDirectory: cps })
        const { secs } = await timed(() => into._start())
        await into._stop()
        res.restore.full.push(secs)
        log(`  restore round ${round}  full (start() into an empty directory)    ${secs.toFixed(3).padStart(7)} s`)
      },
      async () => {
        await dropCaches(cold, tree)
        const { secs } = await timed(() => statTree(tree))
        res.restore.statFloor.push(secs)
        log(`  restore round ${round}  floor: find -printf of the working tree, 4 at once ${secs.toFixed(3).padStart(7)} s`)
      },
    ]
    for (const c of rotate(restores, round)) await c()
    const [inPlace, full] = [measure(tree), measure(out)]
    if (JSON.stringify(inPlace) !== JSON.stringify(full)) problems.push(`round ${round}: restored in place ${JSON.stringify(inPlace)}, in full ${JSON.stringify(full)}`)
    discard(out)
  }
  return res
}
