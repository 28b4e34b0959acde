'use strict'
// Registers this JS realm with the addon (loaded by addon.js) and makes sure no child outlives it: the exit hook
// covers natural exit and process.exit(), the addon's env cleanup hook covers worker terminate(),
// and the watchdog process (started by registerRealm) covers deaths that run no hook at all.

const { binding } = require('./addon')
const { fromNative } = require('./errors')

const realm = binding.registerRealm(fromNative)
process.on('exit', () => {
  binding.killRealm(realm)
})

module.exports = { binding, realm }
