'use strict'
// `procvisor checkpoint ls|capture|restore|rm <sandbox> [name]`: the named checkpoints of a
// running sandbox's working directory. Its supervisor says where the working directory and the
// checkpoints are; the copies are made here, by the native copier, as the sandbox's own
// `checkpoints` makes them, and its processes are left running.

const { binding } = require('../native/native')
const errors = require('../native/errors')
const { CliError, openSandbox } = require('./sandboxes')
const { table, when } = require('./print')

/** What each action takes after the sandbox: a name (required, optional) or none. */
const ACTIONS = { ls: 'none', capture: 'optional', restore: 'required', rm: 'required' }

const { generatedCheckpointName: generatedName } = require('../mastra/paths')

/** Where the sandbox's working directory and checkpoints are, from its supervisor. */
async function placesOf(id) {
  const conn = await openSandbox(id)
  const s = conn.sandbox
  conn.close()
  if (!s.checkpointsDirectory) throw new CliError(`sandbox ${s.id}: its supervisor does not say where its checkpoints are`)
  return s
}

/** The action and name, checked; a UsageError for anything else. */
function checked(args) {
  const { UsageError } = require('./main')
  const wants = ACTIONS[args.action]
  if (!wants) throw new UsageError(`checkpoint takes ls, capture, restore or rm, not ${JSON.stringify(args.action)}`)
  if (wants === 'none' && args.name !== undefined) throw new UsageError(`checkpoint ls takes no name`)
  if (wants === 'required' && args.name === undefined) throw new UsageError(`checkpoint ${args.action} takes the checkpoint's name`)
  if (args.name !== undefined) {
    try {
      binding.checkCheckpointName(args.name)
    } catch (e) {
      if (!(e instanceof errors.InvalidProcessOptionError)) throw e
      throw new UsageError(`${JSON.stringify(args.name)} is not a checkpoint name: [A-Za-z0-9][A-Za-z0-9._-]*, without ".."`)
    }
  }
}

/**
 * The checkpoints of a running sandbox as this command and `procvisor web` use them: the native
 * copier on the places its supervisor gave (`placesOf`), the processes left running.
 */
function checkpointsAt(s) {
  const cps = s.checkpointsDirectory
  return {
    list: () => binding.listCheckpoints(cps),
    capture: (name = generatedName()) => binding.captureCheckpoint(s.workingDirectory, cps, name, s.id).then((r) => ({ name, ...r })),
    restore: (name) => binding.restoreCheckpointInPlace(cps, name, s.workingDirectory),
    delete: (name) => binding.deleteCheckpoint(cps, name),
  }
}

/** What a capture left out, for a person: the first few, and how many more. */
function skippedText(skipped) {
  const shown = skipped.slice(0, SKIPPED_SHOWN).map((s) => `${s.path} (${s.kind})`)
  const more = skipped.length > SKIPPED_SHOWN ? `, and ${skipped.length - SKIPPED_SHOWN} more` : ''
  return `not in it: ${shown.join(', ')}${more} (sockets, FIFOs and devices hold no data to copy; a vanished entry was removed while the capture read the tree)`
}

/** How many skipped entries a capture's line names. */
const SKIPPED_SHOWN = 10

async function checkpoint(args, io) {
  checked(args)
  const s = await placesOf(args.sandbox)
  const cps = s.checkpointsDirectory
  const at = checkpointsAt(s)
  if (args.action === 'ls') {
    const listed = (await at.list()).map((c) => ({ ...c, createdAt: new Date(c.createdMs).toISOString() }))
    if (args.json) {
      const rows = listed.map(({ name, createdAt, files, bytes, newBytes }) => ({ name, createdAt, files, bytes, newBytes: newBytes ?? null }))
      io.out.write(`${JSON.stringify(rows, null, 2)}\n`)
    } else if (listed.length === 0) {
      io.out.write(`sandbox ${s.id} has no checkpoints in ${cps}\n`)
    } else {
      const rows = listed.map((c) => [c.name, when(c.createdAt), String(c.files), String(c.bytes), c.newBytes === undefined ? '-' : String(c.newBytes)])
      io.out.write(table(['NAME', 'CREATED', 'FILES', 'BYTES', 'WRITTEN'], rows))
    }
  } else if (args.action === 'capture') {
    const r = await at.capture(args.name)
    io.out.write(`captured checkpoint ${r.name}: ${r.files} files, ${r.bytes} bytes, ${r.newBytes} bytes written (${r.unchanged} files shared with the last capture)\n`)
    if (r.skipped.length > 0) io.out.write(`${skippedText(r.skipped)}\n`)
  } else if (args.action === 'restore') {
    const r = await at.restore(args.name)
    io.out.write(
      `restored checkpoint ${args.name} into ${s.workingDirectory}: ${r.files - r.unchanged} of ${r.files} files copied (${r.newBytes} bytes), ${r.removed} entries removed\n`,
    )
  } else {
    await at.delete(args.name)
    io.out.write(`deleted checkpoint ${args.name}\n`)
  }
  return 0
}

module.exports = { checkpoint, checkpointsAt, placesOf }
