'use strict'
// Loads the addon once per JS realm and makes sure no child outlives the realm: the exit hook
// covers natural exit and process.exit(), the addon's env cleanup hook covers worker terminate(),
// and the watchdog process (started by registerRealm) covers deaths that run no hook at all.

if (process.platform === 'win32') {
  // Process groups, killpg and pidfd have no Windows equivalent here: an explicit gap, not a crash
  // in the middle of a spawn.
  throw new Error('procvisor does not support Windows yet: it needs POSIX process groups (Linux, macOS).')
}

const binding = require('../binding.js')
const { fromNative } = require('./errors')

const realm = binding.registerRealm(fromNative)
process.on('exit', () => {
  binding.killRealm(realm)
})

module.exports = { binding, realm }
