'use strict'
/**
 * procvisor: a native process supervisor for Node.js agents.
 * See index.d.ts (and types/, which it re-exports) for the documented API and README.md for a tour.
 */
const errors = require('./lib/native/errors')
const { ProcessManager } = require('./lib/faces/manager')
const { ProcessHandle } = require('./lib/faces/handle')
const { Process } = require('./lib/faces/process')
const { Terminal } = require('./lib/faces/terminal')
const { binding } = require('./lib/native/native')

const { fromNative, invalidOption, byCode, codes, ...errorClasses } = errors

/** How many processes are alive in this Node process (all managers, all realms). */
function liveProcessCount() {
  return binding.liveProcessCount()
}

/** The local web view of managers and sandboxes (lib/web/, loaded on first use: it brings in `ws`). */
function createWebView(options) {
  return require('./lib/web').createWebView(options)
}

module.exports = { ProcessManager, ProcessHandle, Process, Terminal, liveProcessCount, createWebView, ...errorClasses }
