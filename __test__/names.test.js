'use strict'
// Process names on procvisor's ProcessManager, both faces, against real processes: the form a
// name must have, one live process per name (launches in flight included), the name free again
// after the exit, lookups and kills by name, and a service keeping its name across runs.
const test = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { ProcessManager, InvalidProcessOptionError } = require('..')
const { alive, eventually, httpGet } = require('./helpers')

test('a bad name is refused before anything runs, on exec and spawn', async () => {
  const pm = new ProcessManager()
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'procvisor-names-'))
  const marker = path.join(dir, 'ran')
  try {
    for (const name of ['', '123', 'a b', 'x/y', 'é', 'a'.repeat(65), 7, null]) {
      await assert.rejects(pm.exec(['touch', marker], { name }), InvalidProcessOptionError, `exec name ${JSON.stringify(name)}`)
      await assert.rejects(pm.spawn(`touch ${marker}`, { name }), InvalidProcessOptionError, `spawn name ${JSON.stringify(name)}`)
    }
    assert.equal(fs.existsSync(marker), false)
    assert.deepEqual(await pm.listProcesses(), [])
    // The longest and the widest a name may be.
    const ok = await pm.exec(['true'], { name: `A-z_0.9${'x'.repeat(57)}` })
    assert.equal((await ok.status()).name.length, 64)
  } finally {
    await pm.close()
    fs.rmSync(dir, { recursive: true, force: true })
  }
})

test('a name a running process holds is refused, naming it, and nothing starts', async () => {
  const pm = new ProcessManager()
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'procvisor-names-'))
  const marker = path.join(dir, 'ran')
  try {
    const web = await pm.exec(['sleep', '30'], { name: 'web' })
    await assert.rejects(pm.spawn(`touch ${marker}`, { name: 'web' }), (e) => e instanceof InvalidProcessOptionError && e.message.includes(`process ${web.pid}`))
    await assert.rejects(pm.exec(['touch', marker], { name: 'web' }), InvalidProcessOptionError)
    assert.equal(fs.existsSync(marker), false)
    assert.equal((await pm.listProcesses()).length, 1)
  } finally {
    await pm.close()
    fs.rmSync(dir, { recursive: true, force: true })
  }
})

test('two launches in flight cannot both take a name; a failed launch frees it', async () => {
  const pm = new ProcessManager()
  try {
    const results = await Promise.allSettled([pm.exec(['sleep', '30'], { name: 'one' }), pm.spawn('sleep 30', { name: 'one' })])
    assert.deepEqual(
      results.map((r) => r.status),
      ['fulfilled', 'rejected'],
    )
    assert.ok(results[1].reason instanceof InvalidProcessOptionError)
    assert.equal((await pm.listProcesses()).length, 1)
    await assert.rejects(pm.exec(['/nonexistent/program'], { name: 'two' }))
    const two = await pm.exec(['true'], { name: 'two' })
    assert.equal(two.name, 'two')
  } finally {
    await pm.close()
  }
})

test('a name is free again once its process has exited, and lookups find the new one', async () => {
  const pm = new ProcessManager()
  try {
    const first = await pm.exec(['true'], { name: 'job' })
    await first.waitForExit()
    const second = await pm.exec(['sleep', '30'], { name: 'job' })
    assert.notEqual(second.id, first.id)
    assert.equal((await pm.getProcess('job')).id, second.id)
    const names = (await pm.listProcesses()).map((s) => [s.id, s.name])
    assert.deepEqual(names, [
      [first.id, 'job'],
      [second.id, 'job'],
    ])
  } finally {
    await pm.close()
  }
})

test('status, listings and lookups by name on both faces; kill(name) kills', async () => {
  const pm = new ProcessManager()
  try {
    const proc = await pm.exec(['sleep', '30'], { name: 'api' })
    const handle = await pm.spawn('sleep 30', { name: 'dev-server' })
    const plain = await pm.spawn('sleep 30')
    assert.equal((await proc.status()).name, 'api')
    assert.equal((await handle.status()).name, 'dev-server')
    assert.equal('name' in (await plain.status()), false)
    assert.equal(handle.name, 'dev-server')
    assert.equal(proc.name, 'api')
    assert.equal(await pm.getProcess('api'), proc)
    assert.equal((await pm.getProcess('dev-server')).id, handle.id)
    assert.equal(await pm.getProcess('nobody'), null)
    assert.equal(await pm.get('dev-server'), handle)
    // The Mastra surface tracks spawns only: an exec's name is not one of its handles.
    assert.equal(await pm.get('api'), undefined)
    const listed = await pm.list()
    assert.equal(listed.find((i) => i.pid === handle.pid).name, 'dev-server')
    assert.equal('name' in listed.find((i) => i.pid === plain.pid), false)
    assert.equal(await pm.kill('dev-server'), true)
    assert.equal(handle.exitCode, 128)
    assert.equal(alive(Number(handle.pid)), false)
    assert.equal(await pm.kill('dev-server'), false)
    assert.equal(alive(proc.pid), true)
  } finally {
    await pm.close()
  }
})

test('a service keeps its name across runs; a lookup by name finds its current run', async () => {
  const pm = new ProcessManager()
  try {
    const svc = await pm.exec(['sh', '-c', 'sleep 0.2; exit 1'], { name: 'svc', restart: { policy: 'always', backoffMs: { initial: 10 } } })
    const firstPid = svc.pid
    await eventually(async () => {
      const now = await svc.status()
      return now.restarts >= 1 && now.state === 'running'
    })
    const st = await (await pm.getProcess('svc')).status()
    assert.equal(st.name, 'svc')
    assert.notEqual(st.pid, firstPid)
    // Still running between runs, so the name stays taken.
    await assert.rejects(pm.exec(['true'], { name: 'svc' }), InvalidProcessOptionError)
  } finally {
    await pm.close()
  }
})

test('the web view shows the name in its rows and opens a process page by its name', async () => {
  const { createWebView } = require('..')
  const pm = new ProcessManager()
  const view = await createWebView({ managers: [pm] })
  const u = new URL(view.url)
  const get = (pathname, headers = {}) => httpGet(view.url, pathname, headers)
  try {
    const proc = await pm.exec(['sleep', '30'], { name: 'web-api' })
    const first = await get(`/?token=${u.searchParams.get('token')}`, { 'sec-fetch-site': 'none' })
    const cookie = first.headers['set-cookie'][0].split(';')[0]
    const index = await get('/', { cookie })
    assert.equal(index.status, 200)
    assert.match(index.body, /<th>NAME<\/th>/)
    assert.match(index.body, new RegExp(`<td class="pid">${proc.pid}</td>\\s*<td class="name">web-api</td>`))
    const page = await get('/p/manager-1/web-api', { cookie })
    assert.equal(page.status, 200)
    assert.match(page.body, new RegExp(`pid ${proc.pid}`))
    assert.equal((await get('/p/manager-1/nobody', { cookie })).status, 404)
  } finally {
    await view.close()
    await pm.close()
  }
})
