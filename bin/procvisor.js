#!/usr/bin/env node
'use strict'
// The `procvisor` command (`npx procvisor --help`).
require('../lib/cli/main.js')
  .main(process.argv.slice(2))
  .then((status) => {
    process.exitCode = status
  })
