'use strict'
// Loads procvisor with its platform package hidden and prints what was thrown, as JSON.
const how = process.argv[2]
const load = how === 'import' ? () => import('procvisor') : async () => require('procvisor')
load().then(
  () => console.log(JSON.stringify({ loaded: true })),
  (err) => console.log(JSON.stringify({ loaded: false, isError: err instanceof Error, code: err && err.code, message: String(err && err.message) })),
)
