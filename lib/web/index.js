'use strict'
// createWebView: the local web view of an app's own managers and sandboxes.

const errors = require('../native/errors')
const { describe } = require('../native/util')
const { startServer } = require('./server')
const { appCatalog } = require('./sources')

function checkList(value, name, test, what) {
  if (value === undefined) return []
  if (!Array.isArray(value)) throw errors.invalidOption(`${name} must be an array, got ${describe(value)}`)
  value.forEach((v, i) => {
    if (!test(v)) throw errors.invalidOption(`${name}[${i}] must be ${what}, got ${describe(v)}`)
  })
  return value
}

/**
 * Serves a page of `managers` (ProcessManager) and `sandboxes` (NativeLocalSandbox) and their
 * processes and terminals on `host` (default 127.0.0.1) : `port` (default a free one). Resolves
 * with `{ url, close() }`; `url` holds the token every request needs.
 */
async function createWebView(options) {
  const o = options === undefined || options === null ? {} : options
  if (typeof o !== 'object') throw errors.invalidOption(`createWebView options must be an object, got ${describe(o)}`)
  const port = o.port === undefined ? 0 : o.port
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw errors.invalidOption(`port must be an integer from 0 to 65535, got ${describe(port)}`)
  const host = o.host === undefined ? '127.0.0.1' : o.host
  if (typeof host !== 'string' || host === '') throw errors.invalidOption(`host must be a string, got ${describe(host)}`)
  const managers = checkList(o.managers, 'managers', (m) => m && typeof m.listProcesses === 'function' && typeof m.getProcess === 'function', 'a ProcessManager')
  const sandboxes = checkList(o.sandboxes, 'sandboxes', (s) => s && s.processes && typeof s.processes.list === 'function', 'a sandbox (NativeLocalSandbox)')
  const view = await startServer({ catalog: appCatalog({ managers, sandboxes }), port, host })
  return { url: view.url, close: view.close }
}

module.exports = { createWebView }
