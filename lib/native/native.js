'use strict'
// lib/native/, the bottom layer: the addon loaded once per realm (addon.js), the realm that dies
// with this Node process (here), the typed errors built from the addon's list (errors.js), and the
// small pieces every layer shares: checks by the native rules (util.js) and the caller's frames on
// a rejection (trace.js). It requires nothing else of lib/. The folders require one way only:
// native <- process <- faces <- persistent, and mastra <- native.
//
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
