#!/usr/bin/env node
'use strict'
// Runs `node <args>` on a Node >= 22.13 (what @mastra/core requires): this Node when it is recent
// enough, otherwise one fetched from the npm registry with `npx -p node@22` (cached after the
// first run). Exit code and signals pass through.
const { spawnSync } = require('node:child_process')

const [major, minor] = process.versions.node.split('.').map(Number)
const recent = major > 22 || (major === 22 && minor >= 13)
const args = process.argv.slice(2)
const r = recent
  ? spawnSync(process.execPath, args, { stdio: 'inherit' })
  : spawnSync('npx', ['-y', '-p', 'node@22', 'node', ...args], { stdio: 'inherit' })
if (r.error) {
  console.error(`could not start Node 22: ${r.error.message}`)
  process.exit(1)
}
process.exit(r.status === null ? 1 : r.status)
