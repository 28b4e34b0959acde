// A sandbox's terminal served over a WebSocket with connect(), on every backend that has
// terminals: typed input, output, the resize message, and a resume after a cursor.
import { after, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { WebSocketServer } from 'ws'
import { createRequire } from 'node:module'
import { BACKENDS, end } from './backends.mjs'
import { eventually, tempDir } from './helpers.mjs'

const client = createRequire(import.meta.url)('../helpers.js').terminalClient
const made = []
after(async () => {
  for (const sb of made) await end(sb)
})

for (const backend of BACKENDS.filter((b) => b.native)) {
  describe(backend.title, { timeout: 60_000 }, () => {
    it('terminal.connect(ws): typed input, output, resize, and since resumes with no repeat', async () => {
      const sb = backend.make({ workingDirectory: tempDir('procvisor-connect-'), env: { PATH: process.env.PATH, PS1: '$ ' } })
      made.push(sb)
      await sb.start()
      const t = await sb.terminals.create({ command: '/bin/sh', cols: 80, rows: 24 })
      assert.equal(typeof t.connect, 'function')
      const wss = new WebSocketServer({ port: 0, host: '127.0.0.1' })
      await new Promise((r) => wss.once('listening', r))
      wss.on('connection', (ws, req) => {
        const since = new URL(req.url, 'http://x').searchParams.get('since') || undefined
        t.connect(ws, { cursors: true, since }).catch(() => {})
      })
      try {
        const port = wss.address().port
        const a = client(port)
        await a.open
        // Typed input may come before the shell's first prompt: a line may start with it.
        a.ws.send('echo $((6*7)); stty size\r')
        assert.ok(await eventually(() => /^(\$ )?42\r?$/m.test(a.output) && /^(\$ )?24 80\r?$/m.test(a.output), 10_000), a.output)
        a.ws.send('\u0000' + JSON.stringify({ cols: 100, rows: 30 }))
        assert.ok(await eventually(async () => (await t.getSnapshot()).cols === 100, 5000))
        a.ws.send('stty size\r')
        assert.ok(await eventually(() => /^(\$ )?30 100\r?$/m.test(a.output), 10_000), a.output)
        const cursor = a.controls.filter((m) => typeof m.cursor === 'string').at(-1).cursor
        a.ws.close()

        const b = client(port, `?since=${encodeURIComponent(cursor)}`)
        await b.open
        b.ws.send('echo resumed\r')
        assert.ok(await eventually(() => /^(\$ )?resumed\r?$/m.test(b.output), 10_000), b.output)
        assert.doesNotMatch(b.output, /^(\$ )?42\r?$/m, 'nothing from before the cursor')
        b.ws.send('exit\r')
        assert.equal(await eventually(() => b.closed, 10_000), 1000, 'closed when the program ends')
      } finally {
        wss.close()
      }
    })
  })
}
