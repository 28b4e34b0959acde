'use strict'
// The faces that run a stack, each as the small target lib/stack/up.js works on, and the
// `up()` / `down()` both faces have: one implementation over both.

const { checkConfig } = require('./config')
const { up, down } = require('./up')
const errors = require('../native/errors')

const live = async (view) => (view && (await view.status()).state !== 'exited' ? view : null)

/** A ProcessManager: argv through exec, a shell command through /bin/sh. */
function managerTarget(pm) {
  return {
    find: async (name) => live(await pm.getProcess(name)),
    spawn: (name, { command, ...options }) => pm.exec(typeof command === 'string' ? ['/bin/sh', '-c', command] : command, { ...options, name }),
  }
}

/** A Mastra sandbox's process manager (a local sandbox or a persistent one): a shell command line. */
function sandboxTarget(processes) {
  const { shellQuote } = require('../process/mastra-rules')
  return {
    find: async (name) => {
      const handle = await processes.get(name)
      return live(handle?.nativeHandle)
    },
    spawn: async (name, { command, ...options }) => {
      const line = typeof command === 'string' ? command : command.map(shellQuote).join(' ')
      return (await processes.spawn(line, { ...options, name })).nativeHandle
    },
  }
}

/**
 * `up(config)` and `down(config?)` for an object whose `_stackTarget()` is its target. The last
 * config brought up is kept, so that `down()` needs none.
 */
const StackMethods = {
  async up(config, options = {}) {
    const checked = config && Array.isArray(config.order) && config.processes ? config : checkConfig(config)
    this._stack = checked
    return up(this._stackTarget(), checked, options)
  },
  async down(config, options = {}) {
    const checked = config === undefined ? this._stack : config && Array.isArray(config.order) && config.processes ? config : checkConfig(config)
    if (!checked) throw errors.invalidOption('down() needs the config of a stack: none was brought up here')
    return down(this._stackTarget(), checked, options)
  },
}

module.exports = { managerTarget, sandboxTarget, StackMethods }
