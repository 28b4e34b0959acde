// Process names on the Mastra face, in a sandbox of this Node process and in a persistent one:
// a clash refused with nothing started, the name free again after the exit, get/kill by name,
// names shown in list() (only when given), a service keeping its name while the supervisor's
// list shows its current pid, lookups by name from another Node process, the command line's
// `ps` and `kill <sandbox> <name>`, and the agent tools taking a name for a pid.
import { after, afterEach, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import * as fs from 'node:fs'
import * as path from 'node:path'
import { WORKSPACE_TOOLS_PREFIX } from '@mastra/core/workspace'
import { createProcessTools } from 'procvisor/mastra'
import { InvalidProcessOptionError } from 'procvisor'
import { BACKENDS, end, onlyOn, privateSockets } from './backends.mjs'
import { alive, eventually, tempDir } from './helpers.mjs'
import { procvisor, child, IMPORT } from './persistent-common.mjs'

privateSockets()
const T = (name) => `${WORKSPACE_TOOLS_PREFIX}_${name}`
const children = []
const dirs = []

const cli = procvisor

after(() => {
  for (const c of children) c.kill('SIGKILL')
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true })
})

for (const backend of BACKENDS) {
  describe(`process names: ${backend.title}`, { timeout: 60_000, skip: onlyOn(backend, ['native', 'persistent'], 'names are a procvisor extension') }, () => {
    let sb
    async function make() {
      const dir = tempDir('procvisor-names-')
      dirs.push(dir)
      sb = backend.make({ workingDirectory: dir, env: { PATH: process.env.PATH } })
      await sb.start()
      return dir
    }
    afterEach(async () => {
      if (sb) await end(sb)
      sb = undefined
    })

    it('a clash is refused naming the running process, and nothing starts; a bad name too', async () => {
      const dir = await make()
      const web = await sb.processes.spawn('sleep 30', { name: 'web' })
      await assert.rejects(sb.processes.spawn('touch ran', { name: 'web' }), (e) => e instanceof InvalidProcessOptionError && e.message.includes(`process ${web.pid}`))
      for (const name of ['42', 'has space', '', 'a'.repeat(65)]) {
        await assert.rejects(sb.processes.spawn('touch ran', { name }), InvalidProcessOptionError, JSON.stringify(name))
      }
      assert.equal(fs.existsSync(path.join(dir, 'ran')), false)
      assert.deepEqual(
        (await sb.processes.list()).map((p) => p.pid),
        [web.pid],
      )
    })

    it('list() has the name only when given; get/kill by name; the name is free again after the exit', async () => {
      await make()
      const named = await sb.processes.spawn('sleep 30', { name: 'api.v2' })
      const plain = await sb.processes.spawn('sleep 30')
      const listed = await sb.processes.list()
      assert.equal(listed.find((p) => p.pid === named.pid).name, 'api.v2')
      assert.equal('name' in listed.find((p) => p.pid === plain.pid), false)
      assert.equal(named.name, 'api.v2')
      assert.equal((await sb.processes.get('api.v2')).pid, named.pid)
      assert.equal(await sb.processes.get('nobody'), undefined)
      assert.equal(await sb.processes.kill('api.v2'), true)
      assert.equal(alive(Number(named.pid)), false)
      const again = await sb.processes.spawn('echo again', { name: 'api.v2' })
      assert.equal((await again.wait()).stdout, 'again\n')
      assert.ok(alive(Number(plain.pid)))
    })

    it('the name is free once wait() resolved, while a child left in the background still runs', async () => {
      await make()
      const first = await sb.processes.spawn('sleep 2 >/dev/null 2>&1 & exit 0', { name: 'job' })
      assert.equal((await first.wait()).exitCode, 0)
      const again = await sb.processes.spawn('echo again', { name: 'job' })
      assert.equal((await again.wait()).stdout, 'again\n')
    })

    it('two objects of one sandbox share its names', async () => {
      const dir = await make()
      const other = backend.make({ id: sb.id, workingDirectory: dir, env: { PATH: process.env.PATH } })
      try {
        await other.start()
        const held = await sb.processes.spawn('sleep 30', { name: 'shared' })
        await assert.rejects(other.processes.spawn('touch ran', { name: 'shared' }), (e) => e instanceof InvalidProcessOptionError && e.message.includes(`process ${held.pid}`))
        assert.equal(fs.existsSync(path.join(dir, 'ran')), false)
      } finally {
        if (backend.persistent) await other.detach()
      }
    })

    it('a service keeps its name across runs; the list shows the current run', { skip: onlyOn(backend, ['persistent'], "the supervisor's list") }, async () => {
      await make()
      const svc = await sb.processes.spawn('sleep 0.2; exit 1', { name: 'svc', restart: { policy: 'always', backoffMs: { initial: 10 } } })
      const ok = await eventually(async () => {
        const st = await svc.nativeHandle.status()
        return st.restarts >= 1 && st.state === 'running' && String(st.pid) !== svc.pid && st
      })
      assert.ok(ok, 'the service restarted')
      const listed = await eventually(async () => (await sb.processes.list()).find((p) => p.name === 'svc' && p.pid !== svc.pid))
      assert.ok(listed, 'the list shows the current run, by its name')
      await assert.rejects(sb.processes.spawn('true', { name: 'svc' }), InvalidProcessOptionError)
      const ps = await cli('ps', sb.id, '--json')
      const row = JSON.parse(ps.out).processes.find((p) => p.name === 'svc')
      assert.notEqual(row.pid, svc.pid)
      assert.equal((await sb.processes.get('svc')).pid, svc.pid)
    })

    it('another Node process finds a process by name, and the supervisor refuses its name to it', { skip: onlyOn(backend, ['persistent'], 'one supervisor for many Node processes') }, async () => {
      const dir = await make()
      const held = await sb.processes.spawn('sleep 30', { name: 'shared' })
      const c = child(
        children,
        `${IMPORT}const sb = new NativeLocalSandbox({ id: ${JSON.stringify(sb.id)}, workingDirectory: ${JSON.stringify(dir)}, persistent: true })
await sb.start()
const h = await sb.processes.get('shared')
const clash = await sb.processes.spawn('true', { name: 'shared' }).then(() => 'started', (e) => e.code)
console.log(JSON.stringify({ pid: h?.pid, clash }))
await sb.detach()`,
      )
      const first = await c.first
      assert.deepEqual(first, { pid: held.pid, clash: 'INVALID_PROCESS_OPTION' })
    })

    it('the command line: ps shows the name, kill takes it', { skip: onlyOn(backend, ['persistent'], 'the command line reaches persistent sandboxes') }, async () => {
      await make()
      const h = await sb.processes.spawn('sleep 30', { name: 'worker-1' })
      const ps = await cli('ps', sb.id)
      assert.equal(ps.status, 0, ps.err)
      assert.match(ps.out, /NAME/)
      assert.match(ps.out, new RegExp(`${h.pid}\\s+worker-1\\s+running`))
      const json = JSON.parse((await cli('ps', sb.id, '--json')).out)
      assert.equal(json.processes.find((p) => p.pid === h.pid).name, 'worker-1')
      const killed = await cli('kill', sb.id, 'worker-1', '--signal', 'KILL')
      assert.equal(killed.status, 0, killed.err)
      assert.equal((await h.wait()).exitCode, 128)
      assert.equal((await cli('kill', sb.id, 'nobody')).status, 1)
    })

    it('the agent tools take a name where they take a pid, and list it', async () => {
      await make()
      const h = await sb.processes.spawn('echo hello-tools; sleep 30', { name: 'tooled' })
      const tools = createProcessTools(sb, { quietMs: 100 })
      const found = await tools[T('wait_for_log')].execute({ pid: 'tooled', pattern: 'hello-tools', timeoutMs: 10_000 }, {})
      assert.equal(found.matched, true)
      const { processes } = await tools[T('list_processes')].execute({}, {})
      assert.equal(processes.find((p) => p.pid === h.pid).name, 'tooled')
      assert.match(tools[T('read_logs')].inputSchema.shape.pid.description, /name/)
    })
  })
}
