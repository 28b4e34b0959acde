// The web view offers a terminal only where typing reaches a terminal: a process on a pty or a
// sandbox's terminal. A plain server gets no terminal link, its terminal page is 404 and its
// terminal socket is refused, on every backend.
import { after, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { createRequire } from 'node:module'
import { createWebView } from 'procvisor'
import { WebSocket } from 'ws'
import { BACKENDS, end } from './backends.mjs'
import { tempDir } from './helpers.mjs'

const made = []
after(async () => {
  for (const sb of made) await end(sb)
})

const { httpGet } = createRequire(import.meta.url)('../helpers.js')
const get = (u, jar, pathname) => httpGet(u, pathname, { cookie: jar })

function upgradeStatus(u, jar, pathname) {
  return new Promise((resolve) => {
    const ws = new WebSocket(`ws://${u.host}${pathname}`, { headers: { cookie: jar, origin: u.origin } })
    ws.on('open', () => (ws.close(), resolve(101)))
    ws.on('unexpected-response', (_req, res) => resolve(res.statusCode))
    ws.on('error', () => {})
  })
}

for (const backend of BACKENDS.filter((b) => b.native)) {
  describe(backend.title, { timeout: 60_000 }, () => {
    it('a terminal link and socket for the pty process only', async () => {
      const sb = backend.make({ workingDirectory: tempDir('procvisor-web-links-'), env: { PATH: process.env.PATH } })
      made.push(sb)
      await sb.start()
      const plain = await sb.processes.spawn('sleep 300')
      const onPty = await sb.processes.spawn('sleep 301', { pty: true })
      const view = await createWebView({ sandboxes: [sb] })
      try {
        const u = new URL(view.url)
        const jar = `procvisor_web_${u.port}=${u.searchParams.get('token')}`
        const index = await get(u, jar, '/')
        assert.equal(index.status, 200)
        const row = (pid) => index.body.split('<tr').find((r) => r.includes(`>${pid}<`))
        assert.ok(row(plain.pid), index.body)
        assert.doesNotMatch(row(plain.pid), />terminal</, 'no terminal link for a plain process')
        assert.match(row(onPty.pid), />terminal</, 'a terminal link for the process on a pty')
        const key = /href="\/p\/([^/]+)\//.exec(index.body)[1]
        assert.equal((await get(u, jar, `/t/${key}/${plain.pid}`)).status, 404)
        assert.equal((await get(u, jar, `/t/${key}/${onPty.pid}`)).status, 200)
        assert.equal(await upgradeStatus(u, jar, `/ws/terminal/${key}/${plain.pid}`), 404)
        assert.equal(await upgradeStatus(u, jar, `/ws/terminal/${key}/${onPty.pid}`), 101)
      } finally {
        await view.close()
        await plain.kill()
        await onPty.kill()
      }
    })

    it("a sandbox's terminals are listed in its group, each with a terminal link and socket", async () => {
      const sb = backend.make({ workingDirectory: tempDir('procvisor-web-links-'), env: { PATH: process.env.PATH } })
      made.push(sb)
      await sb.start()
      const t = await sb.terminals.create({ command: 'sleep 302' })
      const view = await createWebView({ sandboxes: [sb] })
      try {
        const u = new URL(view.url)
        const jar = `procvisor_web_${u.port}=${u.searchParams.get('token')}`
        const index = await get(u, jar, '/')
        const row = index.body.split('<tr').find((r) => r.includes(`>${t.pid}<`))
        assert.ok(row, `terminal ${t.id} (pid ${t.pid}) is not listed:\n${index.body}`)
        // A terminal's row opens its terminal page, its log beside it.
        const link = /href="\/t\/([^/"]+)\/([^/"]+)"/.exec(row)
        assert.ok(link, row)
        assert.equal(decodeURIComponent(link[2]), t.id)
        const key = link[1]
        assert.equal((await get(u, jar, `/t/${key}/${encodeURIComponent(t.id)}`)).status, 200)
        assert.equal(await upgradeStatus(u, jar, `/ws/terminal/${key}/${encodeURIComponent(t.id)}`), 101)
      } finally {
        await view.close()
        await t.terminate()
      }
    })
  })
}
