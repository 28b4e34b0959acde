'use strict'
// `procvisor destroy`: a sandbox and everything of it, running or not. A running one is ended by
// its supervisor, which says where its checkpoints are; of a stopped one nothing runs to say so,
// and `--checkpoints DIR` names the directory. A supervisor that died without its orderly end
// (killed, the machine reset) left its socket, lock file and log behind: those go too.

const fs = require('node:fs')
const path = require('node:path')
const { binding } = require('../native/native')
const { socketPath, lockPathOf, lockHeld, logPathOf } = require('../persistent/wire/location')
const { CliError, openRunning } = require('./sandboxes')
const { shutdown } = require('./commands')

/** Deletes the checkpoints `id` captured in each of `dirs` (once each); their names. */
async function removeCheckpoints(dirs, id) {
  const removed = []
  for (const dir of new Set(dirs.filter(Boolean))) removed.push(...(await binding.removeOwnedCheckpoints(dir, id)))
  return removed
}

/** Deletes what a dead supervisor of `id` left in the socket directory; the names deleted. */
function removeLeftovers(id) {
  const sock = socketPath(id)
  // A held lock is a live supervisor, putting its socket back: its files are not left over.
  if (lockHeld(sock)) throw new CliError(`sandbox ${id}: its supervisor holds the id but does not answer at ${sock} yet; try again in a moment`)
  const gone = []
  for (const file of [sock, lockPathOf(sock), logPathOf(sock)]) {
    if (!fs.existsSync(file)) continue
    fs.rmSync(file, { force: true })
    gone.push(path.basename(file))
  }
  return gone
}

async function destroy(args, io) {
  const given = args.checkpoints === undefined ? undefined : path.resolve(args.checkpoints)
  const conn = await openRunning(args.sandbox)
  if (conn) {
    const s = conn.sandbox
    const progress = await shutdown(conn, io, 'destroying')
    // Only the checkpoints this id captured, as the sandbox's own destroy() deletes.
    const removed = await removeCheckpoints([s.checkpointsDirectory, given], s.id)
    if (removed.length > 0) progress(`deleted checkpoints ${removed.join(', ')}`)
    io.out.write(`destroyed sandbox ${s.id}\n`)
    return 0
  }
  const id = args.sandbox
  const leftovers = removeLeftovers(id)
  if (given === undefined && leftovers.length === 0) {
    throw new CliError(
      `no running sandbox with id ${id}, and nothing of it left here; to delete the checkpoints it captured, name their directory ` +
        `(its checkpointsDirectory, by default .checkpoints beside its working directory): procvisor destroy ${id} --checkpoints DIR`,
    )
  }
  const removed = given === undefined ? [] : await removeCheckpoints([given], id)
  const what = [
    leftovers.length > 0 && `deleted what its supervisor left (${leftovers.join(', ')})`,
    given !== undefined && (removed.length > 0 ? `deleted checkpoints ${removed.join(', ')}` : `no checkpoint of it in ${given}`),
  ].filter(Boolean)
  io.out.write(`destroyed sandbox ${id}, which was not running: ${what.join('; ')}\n`)
  return 0
}

module.exports = { destroy }
