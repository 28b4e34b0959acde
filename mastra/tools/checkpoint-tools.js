'use strict'
// The tools an agent uses to undo its own work: checkpoints of the sandbox's working directory
// (sandbox.checkpoints). A capture shares every unchanged file with the last one, and a restore
// rolls the working directory back in place, writing only what differs, so an agent can take one
// before each risky attempt and go back when the attempt fails.

const errors = require('../../lib/native/errors.js')

const { codes } = errors

/** A checkpoint as the tools return it: plain JSON, its time as an ISO string. */
function shown(c) {
  const out = { name: c.name, createdAt: c.createdAt.toISOString(), files: c.files, bytes: c.bytes }
  if (c.newBytes !== undefined && c.newBytes !== null) out.newBytes = c.newBytes
  return out
}

/** An unknown checkpoint said so that the model knows where to look; any other error as it is. */
function unknownSaid(e) {
  if (e?.code !== codes.SANDBOX_SNAPSHOT_FAILED || e.osCode !== 'ENOENT') return e
  const said = new errors.SandboxSnapshotError(`${e.message}; checkpoint_list lists the checkpoints there are`, { cause: e })
  for (const k of ['osCode', 'path', 'syscall', 'errno']) if (e[k] !== undefined) said[k] = e[k]
  return said
}

function checkpointTools(ctx) {
  const { z, tool } = ctx
  const name = z.string().min(1).max(255).describe('A checkpoint name: letters, digits, ".", "_" and "-", starting with a letter or digit')
  const checkpoint = { name: z.string(), createdAt: z.string(), files: z.number(), bytes: z.number(), newBytes: z.number().optional() }

  const skipped = z
    .array(z.object({ path: z.string(), kind: z.string() }))
    .optional()
    .describe("Entries not in the checkpoint: sockets, FIFOs and devices hold no data; 'vanished' ones were removed while the capture read the tree")

  const capture = tool('checkpoint_capture', {
    description:
      'Save the whole working directory as a named checkpoint, to come back to with checkpoint_restore (take one before a risky change). ' +
      'Files unchanged since the last checkpoint are shared with it, so a checkpoint costs about what changed (newBytes). ' +
      'An existing checkpoint of the same name is replaced. Without a name, one is made from the time.',
    inputSchema: z.object({ name: name.optional() }),
    outputSchema: z.object({ ...checkpoint, skipped }),
    async execute(input, sandbox) {
      const made = await sandbox.checkpoints.capture(input.name)
      const out = shown(made)
      if (made.skipped.length > 0) out.skipped = made.skipped
      return out
    },
  })

  const list = tool('checkpoint_list', {
    description: 'List the checkpoints of the working directory, oldest first: name, when it was taken, files and bytes.',
    inputSchema: z.object({}),
    outputSchema: z.object({ checkpoints: z.array(z.object(checkpoint)) }),
    async execute(_input, sandbox) {
      return { checkpoints: (await sandbox.checkpoints.list()).map(shown) }
    },
  })

  const restore = tool('checkpoint_restore', {
    description:
      'Roll the working directory back to a checkpoint, in place: files made since are removed, changed ones are put back, the rest is left untouched. ' +
      'Running processes are left alone (a dev server may need a restart to see the old files). Returns how many files were written back (restored) and removed.',
    inputSchema: z.object({ name }),
    outputSchema: z.object({ name: z.string(), files: z.number(), unchanged: z.number(), restored: z.number(), removed: z.number(), bytesWritten: z.number() }),
    async execute(input, sandbox) {
      let r
      try {
        r = await sandbox.checkpoints.restore(input.name)
      } catch (e) {
        throw unknownSaid(e)
      }
      return { name: r.name, files: r.files, unchanged: r.unchanged, restored: r.files - r.unchanged, removed: r.removed, bytesWritten: r.newBytes }
    },
  })

  const remove = tool('checkpoint_delete', {
    description: 'Delete a checkpoint. Other checkpoints keep the files they share with it.',
    inputSchema: z.object({ name }),
    outputSchema: z.object({ name: z.string(), deleted: z.boolean() }),
    async execute(input, sandbox) {
      try {
        await sandbox.checkpoints.delete(input.name)
      } catch (e) {
        throw unknownSaid(e)
      }
      return { name: input.name, deleted: true }
    },
  })

  return [capture, list, restore, remove]
}

module.exports = { checkpointTools }
