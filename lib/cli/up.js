'use strict'
// `procvisor up` and `procvisor down`: a stack of services (lib/stack/) in the persistent sandbox
// its config names, so the stack runs on after the command has ended.

const path = require('node:path')
const { loadConfig } = require('../stack/config')
const { openRunning } = require('./sandboxes')

/** The persistent sandbox of a stack: its config's `id`, else the name of the config's directory. */
function sandboxOf(config) {
  const { NativeLocalSandbox } = require('../../mastra')
  const id = config.id ?? path.basename(path.dirname(config.file))
  return new NativeLocalSandbox({ id, workingDirectory: config.workingDirectory, persistent: true, ...(config.timeoutMs !== undefined && { timeoutMs: config.timeoutMs }) })
}

const progress = (io) => (name, what) => io.err.write(`${name}: ${what}\n`)

async function up(args, io) {
  const config = loadConfig(args.file)
  const sandbox = sandboxOf(config)
  await sandbox.start()
  io.err.write(`sandbox ${sandbox.id}: ${sandbox.supervisor} (${sandbox.workingDirectory})\n`)
  let result
  try {
    result = await sandbox.processes.up(config, { onProgress: progress(io) })
  } finally {
    // The stack runs on in the sandbox whatever happens here.
    await sandbox.detach()
  }
  io.err.write(`up: ${result.started.length} started${result.running.length ? `, ${result.running.length} already running` : ''}\n`)
  if (args.detach) return 0
  // Ctrl-C ends the following only: `logs` stops at SIGINT and the stack runs on.
  io.err.write('following the logs (Ctrl-C detaches; procvisor down stops the stack)\n')
  return require('./commands').logs({ sandbox: sandbox.id, follow: true, streams: new Set(['stdout', 'stderr']) }, io)
}

async function down(args, io) {
  const config = loadConfig(args.file)
  const sandbox = sandboxOf(config)
  // Only a running sandbox is stopped: down never starts one.
  const conn = await openRunning(sandbox.id)
  if (!conn) {
    io.err.write(`no running sandbox with id ${sandbox.id}: nothing to stop\n`)
    return 0
  }
  conn.close()
  await sandbox.start()
  const { stopped } = await sandbox.processes.down(config, { onProgress: progress(io) })
  await sandbox.stop()
  io.err.write(`down: ${stopped.length} stopped, sandbox ${sandbox.id} stopped\n`)
  return 0
}

module.exports = { up, down }
