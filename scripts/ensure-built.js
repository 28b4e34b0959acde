#!/usr/bin/env node
'use strict'
// Builds the native addon (release) when no binary is there yet, so `npm run demo` and
// `npm run soak` work on a fresh clone without a separate build step.
const fs = require('node:fs')
const path = require('node:path')
const { spawnSync } = require('node:child_process')

const root = path.join(__dirname, '..')
const built = fs.existsSync(path.join(root, 'binding.js')) && fs.readdirSync(root).some((f) => f.endsWith('.node'))
if (!built) {
  console.error('procvisor: building the native addon (first run, about a minute)…')
  const r = spawnSync('npm', ['run', 'build'], { cwd: root, stdio: 'inherit' })
  if (r.status !== 0) process.exit(r.status === null ? 1 : r.status)
}
