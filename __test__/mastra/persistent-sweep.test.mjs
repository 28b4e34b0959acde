// What killed supervisors leave in the socket directory is swept by the next supervisor that
// starts there: the files of ids whose lock nobody holds and that started over an hour ago, and
// only those (a live sandbox's, a young one's and the starting one's own stay), with a crash's
// log kept for a week.
import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import * as fs from 'node:fs'
import * as os from 'node:os'
import * as path from 'node:path'
import { createRequire } from 'node:module'
import { randomBytes } from 'node:crypto'
import { eventually } from './helpers.mjs'

const require = createRequire(import.meta.url)
const { binding } = require('../../lib/native/native.js')
const { sweepStale, STALE_MS, CRASH_LOG_MS } = require('../../lib/persistent/server/sweep.js')

const HOUR = 60 * 60 * 1000

/** The files a supervisor of `base` leaves in `dir`, made `ageMs` ago; a log with `log` in it. */
function leftBy(dir, base, ageMs, log = '') {
  const files = ['.sock', '.fds', '.lock', '.log'].map((ext) => path.join(dir, base + ext))
  for (const f of files) fs.writeFileSync(f, f.endsWith('.log') ? log : '')
  const then = new Date(Date.now() - ageMs)
  for (const f of files) fs.utimesSync(f, then, then)
  return files
}

const present = (files) => files.map((f) => fs.existsSync(f))

function privateDir() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'procvisor-sweep-'))
  fs.chmodSync(dir, 0o700)
  return dir
}

describe('what killed supervisors left in the socket directory', () => {
  it('goes when its lock is free and over an hour old: the socket, the descriptor socket, the lock, and a log unless a recent crash wrote it', () => {
    const dir = privateDir()
    try {
      const dead = leftBy(dir, 'sandbox-dead', 2 * HOUR)
      const crashed = leftBy(dir, 'sandbox-crashed', 2 * HOUR, 'what went wrong\n')
      fs.utimesSync(crashed[3], new Date(), new Date(Date.now() - 2 * HOUR))
      const oldCrash = leftBy(dir, 'sandbox-old-crash', CRASH_LOG_MS + HOUR, 'long ago\n')
      const young = leftBy(dir, 'sandbox-young', STALE_MS - 60_000)
      const live = leftBy(dir, 'sandbox-live', 2 * HOUR)
      const own = leftBy(dir, 'sandbox-own', 2 * HOUR)
      // A live supervisor holds its lock for its whole life.
      const held = fs.openSync(live[2], 'r+')
      assert.equal(binding.tryLockFile(held, true), true)
      try {
        const swept = sweepStale(dir, own[0])
        assert.deepEqual(swept.sort(), ['sandbox-crashed', 'sandbox-dead', 'sandbox-old-crash'])
        assert.deepEqual(present(dead), [false, false, false, false])
        assert.deepEqual(present(crashed), [false, false, false, true], "a crash's log stays a week")
        assert.deepEqual(present(oldCrash), [false, false, false, false])
        assert.deepEqual(present(young), [true, true, true, true], 'an hour to whoever looks into it')
        assert.deepEqual(present(live), [true, true, true, true])
        assert.deepEqual(present(own), [true, true, true, true])
        // A lock file that is a symlink is not followed, and stays.
        fs.symlinkSync(live[2], path.join(dir, 'sandbox-link.lock'))
        assert.deepEqual(sweepStale(dir, own[0]), [])
        assert.equal(fs.lstatSync(path.join(dir, 'sandbox-link.lock')).isSymbolicLink(), true)
      } finally {
        fs.closeSync(held)
      }
      // Its holder gone, the live one's turn comes.
      assert.deepEqual(sweepStale(dir, own[0]), ['sandbox-live'])
      assert.deepEqual(sweepStale(path.join(dir, 'nowhere'), own[0]), [], 'a directory that is not there: nothing')
    } finally {
      fs.rmSync(dir, { recursive: true, force: true })
    }
  })

  it('is swept by a supervisor that starts beside it', async () => {
    const runtime = privateDir()
    const saved = process.env.XDG_RUNTIME_DIR
    process.env.XDG_RUNTIME_DIR = runtime
    let sb
    try {
      const dir = path.join(runtime, 'procvisor')
      fs.mkdirSync(dir, { mode: 0o700 })
      const dead = leftBy(dir, `sandbox-${randomBytes(8).toString('hex')}`, 2 * HOUR)
      const { NativeLocalSandbox } = await import('procvisor/mastra')
      sb = new NativeLocalSandbox({ id: `sweep-${randomBytes(6).toString('hex')}`, workingDirectory: path.join(runtime, 'wd'), persistent: true, timeoutMs: 60_000 })
      await sb.start()
      assert.equal(path.dirname(sb._runtime.connection().socketPath), dir)
      assert.ok(await eventually(() => present(dead).every((p) => !p), 10_000), 'swept once the supervisor serves')
      assert.equal(fs.existsSync(sb._runtime.connection().socketPath), true, 'its own socket stays')
    } finally {
      await sb?.destroy().catch(() => {})
      if (saved === undefined) delete process.env.XDG_RUNTIME_DIR
      else process.env.XDG_RUNTIME_DIR = saved
      fs.rmSync(runtime, { recursive: true, force: true })
    }
  })
})
