'use strict'
// Where a persistent sandbox's processes write their logs: on by default, so that what scrolled
// past the 1 MiB a supervisor keeps in memory can still be read, by any client, after the Node
// process that started the process is gone.

const path = require('node:path')
const { binding } = require('../../native/native')

/** The directory a persistent sandbox's logs go to without `logDirectory`. */
function defaultLogDirectory(workingDirectory, id) {
  // Beside the working directory, as the checkpoints are by default: outside what an agent
  // edits and captures, and kept after the supervisor ends.
  return path.join(path.dirname(workingDirectory), '.procvisor-logs', String(id))
}

/**
 * A persistent sandbox's log options, checked (and the directory made) when it is constructed:
 * `logDirectory` relative to the working directory, else the default; `false`, none. A default directory that
 * cannot be made leaves the sandbox with its output in memory only, as before there were files;
 * a `logDirectory` asked for, or a bad `logMaxBytes` or `logKeep`, is an InvalidProcessOptionError.
 */
function sandboxLogFiles(o, workingDirectory, id) {
  // Turned off: the output stays in the supervisor's memory only (1 MiB per process).
  if (o.logDirectory === false) return null
  const asked = o.logDirectory !== undefined
  const logDirectory = asked ? o.logDirectory : defaultLogDirectory(workingDirectory, id)
  try {
    return binding.resolveLogFiles({ workingDirectory, logDirectory, logMaxBytes: o.logMaxBytes, logKeep: o.logKeep })
  } catch (e) {
    if (asked || !/^invalid option logDirectory\b/.test(e.message)) throw e
    return null
  }
}

/**
 * The log options of one supervisor: a directory of its own under the sandbox's, named by its
 * start, since process ids begin again at each start and must not replace an earlier one's files.
 * Null when the sandbox has none or it cannot be made (said on the supervisor's stderr, its log).
 */
function supervisorLogFiles(config, startedAt) {
  const files = config.logFiles
  if (!files) return null
  const start = `${new Date(startedAt).toISOString().replace(/:/g, '-')}-${process.pid}`
  try {
    return binding.resolveLogFiles({
      workingDirectory: config.workingDirectory,
      logDirectory: path.join(files.directory, start),
      logMaxBytes: files.maxBytes,
      logKeep: files.keep,
    })
  } catch (e) {
    console.error(`procvisor sandbox ${config.id}: output stays in memory only: ${e.message}`)
    return null
  }
}

module.exports = { defaultLogDirectory, sandboxLogFiles, supervisorLogFiles }
