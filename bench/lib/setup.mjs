// Everything a bench run needs before measuring: the Rust limit program built in release, a private
// copy of the release addon (so a concurrent `npm run build:debug` cannot swap the binary under a
// running bench), the machine description, and the contenders' libraries.

import { execFileSync, execFile } from 'node:child_process'
import { createRequire } from 'node:module'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

export const BENCH = path.dirname(path.dirname(fileURLToPath(import.meta.url)))
export const ROOT = path.dirname(BENCH)
export const LIMIT_BIN = path.join(BENCH, 'limit', 'target', 'release', 'procvisor-bench-limit')
/** The environment every contender gives its children: PATH only (procvisor's and Mastra's default). */
export const CHILD_ENV = { PATH: process.env.PATH || '/usr/local/bin:/usr/bin:/bin' }

export function buildLimit() {
  execFileSync('cargo', ['build', '--release', '--quiet', '--manifest-path', path.join(BENCH, 'limit', 'Cargo.toml')], {
    cwd: ROOT,
    stdio: ['ignore', 'inherit', 'inherit'],
  })
  return LIMIT_BIN
}

/**
 * Copies the newest release build of the addon to bench/.cache and points the loader at it
 * (NAPI_RS_NATIVE_LIBRARY_PATH, inherited by the bench's child Node processes too).
 */
export function stageAddon() {
  if (process.env.BENCH_ADDON) {
    // An explicit binary (e.g. a patched build) for an A/B run.
    process.env.NAPI_RS_NATIVE_LIBRARY_PATH = path.resolve(process.env.BENCH_ADDON)
    return { path: process.env.NAPI_RS_NATIVE_LIBRARY_PATH, builtAt: undefined }
  }
  const candidates = []
  const targetDir = path.join(ROOT, 'target')
  for (const dir of [path.join(targetDir, 'release'), ...safeList(targetDir).map((t) => path.join(targetDir, t, 'release'))]) {
    for (const name of ['libprocvisor.so', 'libprocvisor.dylib']) {
      const p = path.join(dir, name)
      if (fs.existsSync(p)) candidates.push({ p, mtime: fs.statSync(p).mtimeMs })
    }
  }
  candidates.sort((a, b) => b.mtime - a.mtime)
  if (candidates.length === 0) {
    return { path: '(package default loader)', builtAt: undefined }
  }
  const src = candidates[0]
  const dst = path.join(BENCH, '.cache', 'procvisor.node')
  fs.mkdirSync(path.dirname(dst), { recursive: true })
  fs.copyFileSync(src.p, dst)
  process.env.NAPI_RS_NATIVE_LIBRARY_PATH = dst
  return { path: path.relative(ROOT, src.p), builtAt: new Date(src.mtime).toISOString() }
}

function safeList(dir) {
  try {
    return fs.readdirSync(dir)
  } catch {
    return []
  }
}

export function machine() {
  let model = os.cpus()[0]?.model || 'unknown'
  try {
    const m = fs.readFileSync('/proc/cpuinfo', 'utf8').match(/^model name\s*:\s*(.+)$/m)
    if (m) model = m[1].trim()
  } catch {}
  let glibc = ''
  let steal
  try {
    steal = Number(fs.readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/)[8]) / 100
  } catch {}
  try {
    glibc = process.report?.getReport?.().header?.glibcVersionRuntime || ''
  } catch {}
  return {
    cpu: model,
    cores: os.cpus().length,
    memGiB: Math.round(os.totalmem() / 2 ** 30),
    node: process.version,
    kernel: `${os.type()} ${os.release()}`,
    glibc,
    loadavg: os.loadavg().map((x) => x.toFixed(2)).join(' '),
    stealSecs: steal,
  }
}

/**
 * The procvisor package (CommonJS), loaded after stageAddon() set the binary. BENCH_PROCVISOR_ROOT
 * points the bench at another copy of the JS package (e.g. a patched one) for an A/B run.
 */
export function procvisor() {
  return createRequire(import.meta.url)(process.env.BENCH_PROCVISOR_ROOT || ROOT)
}

/** Runs the limit program; resolves with its JSON report. */
export function runLimit(args) {
  return new Promise((resolve, reject) => {
    execFile(LIMIT_BIN, args.map(String), { env: CHILD_ENV, maxBuffer: 1 << 20 }, (err, stdout, stderr) => {
      if (err) return reject(new Error(`limit ${args.join(' ')} failed: ${err.message}\n${stderr}`))
      resolve(JSON.parse(stdout))
    })
  })
}

/** Resolves after `ms`. */
export const sleep = (ms) => new Promise((r) => setTimeout(r, ms))

/** Pids of live processes (not zombies) whose argv contains every one of `needles`. */
export function findProcesses(needles) {
  const out = []
  for (const pid of safeList('/proc')) {
    if (!/^\d+$/.test(pid)) continue
    try {
      const argv = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0')
      if (!needles.every((n) => argv.includes(n))) continue
      const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8')
      const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3)
      if (state !== 'Z' && state !== 'X') out.push(Number(pid))
    } catch {}
  }
  return out
}

/** Direct children of this process that are still alive (not zombies), with their argv. */
export function liveChildren(ppid = process.pid) {
  const out = []
  for (const pid of safeList('/proc')) {
    if (!/^\d+$/.test(pid)) continue
    try {
      const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8')
      const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
      if (Number(rest[1]) !== ppid || rest[0] === 'Z') continue
      out.push({ pid: Number(pid), argv: fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean) })
    } catch {}
  }
  return out
}

/**
 * SIGKILLs every live child left behind (procvisor's watchdog excepted: it ends with its Node)
 * and returns them as "pid argv" strings, for the section's leak report.
 */
export function killLeftovers() {
  const isWatchdog = (c) => c.argv[0] === '/bin/sh' && /trap '' INT TERM HUP QUIT PIPE/.test(c.argv[2] || '')
  const left = liveChildren().filter((c) => !isWatchdog(c))
  for (const c of left) {
    try {
      process.kill(c.pid, 'SIGKILL')
    } catch {}
  }
  return left.map((c) => `${c.pid} ${c.argv.join(' ')}`)
}

function cpuTimes() {
  const f = fs.readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number)
  const idle = f[3] + (f[4] || 0)
  return { idle, total: f.reduce((a, b) => a + b, 0) }
}

/** Fraction of all CPUs busy over the next `ms` (0..1), from /proc/stat; undefined off Linux. */
export async function cpuBusy(ms = 1000) {
  try {
    const a = cpuTimes()
    await sleep(ms)
    const b = cpuTimes()
    return 1 - (b.idle - a.idle) / Math.max(1, b.total - a.total)
  } catch {
    return undefined
  }
}

/**
 * Waits (at most `maxSecs`) until the machine is quiet, so other work on this box does not land in
 * one contender's numbers. Resolves with the busy fraction seen last.
 */
export async function waitQuiet({ threshold = 0.25, maxSecs = 45, log = () => {} } = {}) {
  const t0 = Date.now()
  let busy = await cpuBusy(700)
  let said = false
  while (busy !== undefined && busy > threshold && Date.now() - t0 < maxSecs * 1000) {
    if (!said) log(`   (machine busy: ${(busy * 100).toFixed(0)}% of all CPUs in use by others; waiting up to ${maxSecs.toFixed(0)} s)`)
    said = true
    busy = await cpuBusy(1000)
  }
  if (said) log(`   (${busy !== undefined && busy <= threshold ? 'quiet' : 'still busy'} after ${((Date.now() - t0) / 1000).toFixed(0)} s: ${(busy * 100).toFixed(0)}%)`)
  return busy
}
