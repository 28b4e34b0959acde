// examples/terminal.mjs: a shell on a terminal, driven by keys and read off its screen.
import { ProcessManager } from 'procvisor'

const pm = new ProcessManager()
const t = await pm.createTerminal({ command: ['bash', '--norc', '-i'], cols: 100, rows: 30 }) // default ['/bin/sh']
await t.write('echo "six times seven is $((6 * 7))"\r') // '\r' is Enter
await t.waitForLog(/is 42/) // the answer, not the echo of the typed line (which reads "$((6 * 7))")
const { lines, cursor } = await t.getSnapshot() // what a terminal emulator shows now
console.log(lines.find((line) => line.includes('is 42')), cursor)

await t.write('sleep 600\r')
await t.waitForLog(/sleep 600/)
await t.interrupt() // SIGINT to the foreground job (tcgetpgrp); the shell lives on
await t.resize(120, 40) // the foreground job gets SIGWINCH
const exit = await t.terminate() // kills the session; resolves once every process is gone
console.log('terminated by', exit.signal)

// The whole output, from the start, as logs() gives it (resumable from any cursor).
let printed = 0
for await (const e of await t.output()) if (e.type === 'stdout') printed += e.data.length
console.log('printed', printed > 0 ? 'something' : 'nothing')
await pm.close()
