#!/usr/bin/env node
'use strict'
// `npm publish` run in the checkout: refuse while a local build sits in the package root. "files"
// lists `procvisor.*.node` so that a git or folder install, which builds from source, packs its
// binary; published from here, the main package would carry this machine's (often debug) build
// next to the platform packages. `npm run package` stages a clean main package instead.
const fs = require('node:fs')
const path = require('node:path')

const root = path.join(__dirname, '..')
const local = fs.readdirSync(root).filter((f) => /^procvisor\..+\.node$/.test(f))
if (local.length > 0) {
  const { version } = require('../package.json')
  console.error(
    `procvisor: not publishing from the checkout: ${local.join(', ')} would go into the main package. ` +
      `Run \`npm run package\` and publish dist/ (the platform tarball first, then dist/procvisor-${version}.tgz), ` +
      'or remove the local build.',
  )
  process.exit(1)
}
