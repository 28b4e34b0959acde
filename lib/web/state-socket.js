'use strict'
// The index's WebSocket: the catalog's groups and process rows, live. One loop serves every open
// index page: while at least one is connected it reads the catalog at most every TICK_MS, measures
// the processes (metrics.js) and sends each page only the groups and rows that changed, as one
// JSON text frame `{ type: 'state', groups: { set, drop }, rows: { set, drop } }`. A page that
// connects is sent everything first. With no page connected nothing is read or measured.

const { Sampler, rowModel, groupModel } = require('./metrics')

const TICK_MS = 500

class StateHub {
  constructor(catalog) {
    this.catalog = catalog
    this.sampler = new Sampler()
    this.clients = new Set()
    /** What the pages were last sent: id → [model, its JSON]. */
    this.groups = new Map()
    this.rows = new Map()
    this.loop = null
    this.closed = false
  }

  /** Serves `ws` until it closes. */
  add(ws) {
    this.clients.add(ws)
    ws.on('close', () => this.clients.delete(ws))
    if (this.groups.size > 0) this.sendTo(ws, this.everything())
    // A loop may already be between ticks; a new page then waits at most one tick for its rows.
    if (!this.loop) this.loop = this.run().finally(() => (this.loop = null))
  }

  everything() {
    return { type: 'state', groups: { set: [...this.groups.values()].map((v) => v[0]), drop: [] }, rows: { set: [...this.rows.values()].map((v) => v[0]), drop: [] } }
  }

  sendTo(ws, message) {
    // A page that cannot keep up is sent the next change instead of a growing queue.
    if (ws.readyState === 1 && ws.bufferedAmount < 1024 * 1024) ws.send(JSON.stringify(message))
  }

  async run() {
    while (this.clients.size > 0 && !this.closed) {
      const started = Date.now()
      try {
        await this.tick(started)
      } catch {
        // The catalog failed as a whole (a socket directory gone, say): the next tick tries again.
      }
      await new Promise((r) => setTimeout(r, Math.max(0, TICK_MS - (Date.now() - started))))
    }
    // No page is watching: the measures would be stale when one comes back.
    this.sampler.clear()
    this.groups.clear()
    this.rows.clear()
  }

  async tick(now) {
    const groups = new Map()
    const rows = new Map()
    for (const g of await this.catalog.list()) {
      const measures = []
      for (const p of g.processes) {
        const id = `${g.key}/${p.ref}`
        const m = this.sampler.measure(id, p, now)
        measures.push(m)
        const row = rowModel(g, p, m)
        rows.set(row.id, [row, JSON.stringify(row)])
      }
      const model = groupModel(g, measures)
      groups.set(model.key, [model, JSON.stringify(model)])
    }
    this.sampler.sweep()
    const message = { type: 'state', groups: diff(this.groups, groups), rows: diff(this.rows, rows) }
    this.groups = groups
    this.rows = rows
    if (message.groups.set.length + message.groups.drop.length + message.rows.set.length + message.rows.drop.length === 0) return
    for (const ws of this.clients) this.sendTo(ws, message)
  }

  close() {
    this.closed = true
    for (const ws of this.clients) ws.terminate()
  }
}

/** What changed from `before` to `after`: the entries new or different, and the ids gone. */
function diff(before, after) {
  const set = []
  for (const [id, [model, json]] of after) if (before.get(id)?.[1] !== json) set.push(model)
  const drop = [...before.keys()].filter((id) => !after.has(id))
  return { set, drop }
}

module.exports = { StateHub, TICK_MS }
