// Each program of the stack notes in events.log when it started, and when its shutdown signal came.
const fs = require('node:fs')
module.exports = function note(name, signal) {
  const line = (what) => fs.appendFileSync('events.log', `${what} ${name} ${Date.now()}\n`)
  line('start')
  process.on(signal, () => {
    line(`stop:${signal}`)
    process.exit(0)
  })
  return line
}
