'use strict'
// A sandbox's checkpoints as the index shows them, live. The index is read every half second
// while a page is open, and a checkpoint that has no record of procvisor's (one Mastra's own
// LocalSandbox captured) is counted by walking its files: so a checkpoints directory is listed
// again only when it changed (its mtime, ctime or inode moved: a capture, a deletion, a record
// rewritten all rename or unlink in it), and otherwise the last listing is shown.

const fs = require('node:fs')

/** Directories remembered at most; a persistent sandbox that is gone leaves its entry to age out. */
const REMEMBERED = 64

const cache = new Map()

/** A checkpoint as the pages draw it: plain JSON, its time in ms since the epoch. */
function model(c) {
  return { name: c.name, createdAt: c.createdMs, files: c.files, bytes: c.bytes, newBytes: c.newBytes ?? null }
}

/**
 * The checkpoints in `dir`, oldest first, as `read()` (the native listing) gives them when the
 * directory changed since the last call, else as they were then. A missing directory has none.
 */
async function listed(dir, read) {
  let st
  try {
    st = await fs.promises.stat(dir, { bigint: true })
  } catch (e) {
    if (e && e.code === 'ENOENT') return []
    throw e
  }
  // Taken before the listing: a change while it runs shows at the next call.
  const stamp = `${st.ino}:${st.mtimeNs}:${st.ctimeNs}`
  const hit = cache.get(dir)
  if (hit && hit.stamp === stamp) return hit.list
  const list = (await read()).map(model)
  cache.delete(dir)
  cache.set(dir, { stamp, list })
  if (cache.size > REMEMBERED) cache.delete(cache.keys().next().value)
  return list
}

/**
 * Adds a group's checkpoints, as `list()` gives them, to its catalog `entry`; a listing that
 * fails is said on the page, the processes still shown.
 */
async function withCheckpoints(entry, list) {
  try {
    const cps = await list()
    if (cps) entry.checkpoints = cps
  } catch (e) {
    entry.checkpoints = []
    entry.checkpointsError = e && e.message ? e.message : String(e)
  }
}

/**
 * Does what a checkpoint button asked with `ops` (`sandbox.checkpoints`, or the CLI's operations
 * on a persistent sandbox): what the capture or restore reported, or `{ name }` for a deletion.
 */
async function act(ops, action, name) {
  if (action === 'capture') return ops.capture(name)
  if (action === 'restore') return ops.restore(name)
  await ops.delete(name)
  return { name }
}

/** What a button asked of checkpoints, checked: `{ action, name }`, or a sentence saying why not. */
function request(body) {
  const action = body && body.action
  if (!['capture', 'restore', 'delete'].includes(action)) return { refused: 'action must be capture, restore or delete' }
  const name = body.name === undefined || body.name === null || body.name === '' ? undefined : body.name
  if (name !== undefined && typeof name !== 'string') return { refused: 'name must be a string' }
  if (action !== 'capture' && name === undefined) return { refused: `${action} needs the checkpoint's name` }
  return { action, name }
}

module.exports = { act, listed, request, withCheckpoints }
