'use strict'
// The index's numbers: CPU% from the CPU time a process used between two samples (status()'s
// cpuTimeMs), its memory, and a short history of both for the sparklines. One sampler serves every
// open index page; it is fed only while a page is connected, so nothing is measured otherwise.

/** One history point every this many ms: 90 points are the last 3 minutes. */
const POINT_EVERY_MS = 2000
const POINTS = 90

/** `12.5 MiB`: binary units, one decimal below 100. */
function bytesText(n) {
  if (typeof n !== 'number' || !Number.isFinite(n)) return ''
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB']
  let v = n
  let u = 0
  while (v >= 1024 && u < units.length - 1) {
    v /= 1024
    u++
  }
  return u === 0 ? `${v} B` : `${v < 100 ? v.toFixed(1) : Math.round(v)} ${units[u]}`
}

/** `37%`; a multi-threaded process may pass 100. */
function percentText(p) {
  return typeof p === 'number' && Number.isFinite(p) ? `${Math.round(p)}%` : ''
}

class Sampler {
  constructor() {
    /** id → { cpuTimeMs, at, pid, lastPoint, cpu: [], mem: [] } */
    this.seen = new Map()
  }

  /**
   * Measures `p` (a catalog process entry) as row `id` at time `now`; resolves with
   * `{ cpuPercent, memoryBytes, cpuHistory, memHistory }`, fields absent where unknown.
   */
  measure(id, p, now) {
    let s = this.seen.get(id)
    // Another run of a service is another process: its CPU time starts again from 0.
    if (!s || s.pid !== p.pid) {
      s = { cpuTimeMs: undefined, at: now, pid: p.pid, lastPoint: 0, cpu: s ? s.cpu : [], mem: s ? s.mem : [] }
      this.seen.set(id, s)
    }
    s.used = true
    const out = {}
    if (p.state === 'exited') return { cpuHistory: s.cpu, memHistory: s.mem }
    if (typeof p.cpuTimeMs === 'number') {
      if (s.cpuTimeMs !== undefined && now > s.at && p.cpuTimeMs >= s.cpuTimeMs) out.cpuPercent = (100 * (p.cpuTimeMs - s.cpuTimeMs)) / (now - s.at)
      s.cpuTimeMs = p.cpuTimeMs
      s.at = now
    }
    if (typeof p.memoryBytes === 'number') out.memoryBytes = p.memoryBytes
    // A point waits for a CPU% where the process has CPU time: the first sample has none to compare.
    const measured = typeof p.cpuTimeMs === 'number' ? out.cpuPercent !== undefined : out.memoryBytes !== undefined
    if (now - s.lastPoint >= POINT_EVERY_MS && measured) {
      s.lastPoint = now
      s.cpu = [...s.cpu, Math.round(out.cpuPercent ?? 0)].slice(-POINTS)
      s.mem = [...s.mem, out.memoryBytes ?? 0].slice(-POINTS)
    }
    out.cpuHistory = s.cpu
    out.memHistory = s.mem
    return out
  }

  /** Forgets the processes not measured since the last call (released, or their sandbox gone). */
  sweep() {
    for (const [id, s] of this.seen) {
      if (!s.used) this.seen.delete(id)
      s.used = false
    }
  }

  clear() {
    this.seen.clear()
  }
}

/** The word of a process's state on the index: what a person watching wants to see first. */
function stateWord(p) {
  if (p.gaveUp) return 'gave up'
  if (p.state === 'exited') return p.exitCode === undefined || p.exitCode === null ? 'exited' : `exited ${p.exitCode}`
  if (p.state !== 'running') return String(p.state ?? '')
  if (p.healthy === false) return 'unhealthy'
  return p.ready === true ? 'ready' : 'running'
}

function pagePath(kind, key, ref) {
  return `/${kind}/${encodeURIComponent(key)}/${encodeURIComponent(ref)}`
}

/**
 * A process row of the index as the page draws it, rendered on the server for the first paint
 * and sent as JSON to update it: the same fields both ways, so the two never disagree.
 */
function rowModel(group, p, m = {}) {
  const link = p.terminal ? pagePath('t', group.key, p.ref) : pagePath('p', group.key, p.ref)
  const aside = p.terminal ? { href: pagePath('p', group.key, p.ref), text: 'log' } : p.state === 'running' && p.pty ? { href: pagePath('t', group.key, p.ref), text: 'terminal' } : null
  const startedAt = p.state !== 'exited' && p.startedAt ? Date.parse(p.startedAt) : null
  return {
    id: `${group.key}/${p.ref}`,
    group: group.key,
    ref: String(p.ref),
    pid: p.pid ?? '',
    name: p.name ?? '',
    state: p.state,
    word: stateWord(p),
    restarts: p.restarts ?? null,
    cpu: percentText(m.cpuPercent),
    mem: bytesText(m.memoryBytes ?? (p.state === 'exited' ? undefined : p.memoryBytes)),
    cpuHistory: m.cpuHistory ?? [],
    memHistory: m.memHistory ?? [],
    startedAt: Number.isFinite(startedAt) ? startedAt : null,
    command: p.command || String(p.ref),
    link,
    aside,
    canKill: p.state !== 'exited',
    // Only a service has a next run to start.
    canRestart: p.restarts !== undefined && p.restarts !== null && !p.terminal && p.state !== 'exited',
  }
}

/** A group's header: its totals over its running processes, its lifetime, what can be done to it. */
function groupModel(g, rows) {
  let cpu
  let mem
  for (const r of rows) {
    if (r.cpuPercent !== undefined) cpu = (cpu ?? 0) + r.cpuPercent
    if (r.memoryBytes !== undefined) mem = (mem ?? 0) + r.memoryBytes
  }
  return {
    key: g.key,
    title: g.title,
    detail: g.detail ?? '',
    error: g.error ?? null,
    expiresAt: typeof g.expiresAt === 'number' ? g.expiresAt : null,
    totals: [cpu === undefined ? '' : `CPU ${percentText(cpu)}`, mem === undefined ? '' : `memory ${bytesText(mem)}`].filter(Boolean).join(' · '),
    canStop: g.canStop === true,
    canDestroy: g.canDestroy === true,
    // null: the group has no checkpoints (a ProcessManager); else its list, oldest first.
    checkpoints: Array.isArray(g.checkpoints) ? g.checkpoints.map(checkpointModel) : null,
    checkpointsError: g.checkpointsError ?? null,
  }
}

/** A checkpoint of a group as the index draws it (lib/web/checkpoints.js lists them). */
function checkpointModel(c) {
  return { name: c.name, createdAt: c.createdAt, files: c.files, size: bytesText(c.bytes), written: c.newBytes === null ? '' : bytesText(c.newBytes) }
}

module.exports = { Sampler, bytesText, percentText, stateWord, rowModel, groupModel }
