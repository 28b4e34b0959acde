'use strict'
// A stack's config: the loader refuses every mistake with the path of the bad key (a bad YAML
// file with its line and column) before anything runs, the start order follows the
// dependencies, and a ProcessManager's up()/down() run real processes in that order.
const test = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { ProcessManager, InvalidProcessOptionError, ProcessExitedBeforeReadyError, ProcessAbortedError } = require('..')
const { loadConfig, checkConfig } = require('../lib/stack/config')
const { specOf } = require('../lib/stack/up')
const { freePort } = require('./helpers')

const STACK = path.join(__dirname, '..', 'examples', 'stack')

function tempDir(t) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'procvisor-stack-'))
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }))
  return dir
}

/** A ProcessManager in a directory of the test's own, both gone after it. */
function managerIn(t) {
  const dir = tempDir(t)
  const pm = new ProcessManager({ workingDirectory: dir })
  t.after(() => pm.close())
  return { dir, pm }
}

function configFile(t, name, text) {
  const file = path.join(tempDir(t), name)
  fs.writeFileSync(file, text)
  return file
}

test('the example stack starts db, then api, then worker, whatever order the file lists them in', () => {
  const config = loadConfig(path.join(STACK, 'procvisor.config.yaml'))
  assert.deepEqual(config.order, ['db', 'api', 'worker'])
  assert.equal(config.id, 'shop')
  assert.equal(config.timeoutMs, 0)
  assert.deepEqual(config.processes.api.command, ['node', 'api.js'])
  const listedLast = checkConfig({ processes: { worker: { command: 'w', dependsOn: { api: 'started' } }, api: { command: 'a', dependsOn: { db: 'completed' } }, db: { command: 'd' } } })
  assert.deepEqual(listedLast.order, ['db', 'api', 'worker'])
})

test('without -f, the yaml file of the directory is read before the json one', (t) => {
  const dir = tempDir(t)
  fs.writeFileSync(path.join(dir, 'procvisor.config.json'), JSON.stringify({ processes: { fromJson: { command: 'true' } } }))
  fs.writeFileSync(path.join(dir, 'procvisor.config.yml'), 'processes:\n  fromYaml: { command: "true" }\n')
  assert.deepEqual(loadConfig(undefined, dir).order, ['fromYaml'])
  fs.rmSync(path.join(dir, 'procvisor.config.yml'))
  assert.deepEqual(loadConfig(undefined, dir).order, ['fromJson'])
  fs.rmSync(path.join(dir, 'procvisor.config.json'))
  assert.throws(() => loadConfig(undefined, dir), (e) => e instanceof InvalidProcessOptionError && /procvisor\.config\.yaml/.test(e.message))
})

test('a cycle is refused, named, as is a dependency on a process the stack does not have', () => {
  const cycle = { processes: { a: { command: 'x', dependsOn: { c: 'started' } }, b: { command: 'x', dependsOn: { a: 'ready' } }, c: { command: 'x', dependsOn: { b: 'started' } } } }
  cycle.processes.a.readiness = { port: 1 }
  assert.throws(() => checkConfig(cycle), (e) => e instanceof InvalidProcessOptionError && /cycle: a -> c -> b -> a/.test(e.message))
  assert.throws(() => checkConfig({ processes: { a: { command: 'x', dependsOn: { a: 'started' } } } }), /cycle: a -> a/)
  assert.throws(
    () => checkConfig({ processes: { api: { command: 'x', dependsOn: { dbb: 'started' } } } }),
    (e) => e instanceof InvalidProcessOptionError && /processes\.api\.dependsOn\.dbb: api depends on dbb, which is not a process of the stack/.test(e.message),
  )
})

test('each mistake names the path of the bad key', () => {
  const bad = [
    [{ processes: { a: { command: 'x' } }, extra: 1 }, /config: extra: unknown key/],
    [{ processes: { a: { command: 'x', cwdd: '.' } } }, /processes\.a\.cwdd: unknown key/],
    [{ processes: { a: { command: 7 } } }, /processes\.a\.command: must be a string .* not number/],
    [{ processes: { a: { command: [] } } }, /processes\.a\.command: an argv must be a non-empty array of strings/],
    [{ processes: { a: { command: 'x', env: { A: 1 } } } }, /processes\.a\.env\.A: must be a string, not number/],
    [{ processes: { a: { command: 'x', readiness: { periodMs: 100 } } } }, /processes\.a\.readiness: needs exactly one target .* has none/],
    [{ processes: { a: { command: 'x', liveness: { port: 1, log: 'x' } } } }, /processes\.a\.liveness: needs exactly one target .* has port and log/],
    [{ processes: { a: { command: 'x', readiness: { port: 1, every: 5 } } } }, /processes\.a\.readiness\.every: unknown key/],
    [{ processes: { a: { command: 'x', dependsOn: { b: 'up' } }, b: { command: 'y' } } }, /processes\.a\.dependsOn\.b: must be one of started, ready, healthy, completed, completed-successfully/],
    [{ processes: { a: { command: 'x', dependsOn: { b: 'ready' } }, b: { command: 'y' } } }, /processes\.a\.dependsOn\.b: b has no readiness probe/],
    [{ processes: { a: { command: 'x', dependsOn: { b: 'healthy' } }, b: { command: 'y' } } }, /processes\.a\.dependsOn\.b: b has no liveness probe/],
    [{ processes: { '123': { command: 'x' } } }, /processes\.123: a process name/],
    [{ processes: {} }, /processes: names no process/],
    [{ timeoutMs: -1, processes: { a: { command: 'x' } } }, /timeoutMs: must be a whole number/],
    [{ id: 3, processes: { a: { command: 'x' } } }, /id: must be a non-empty string/],
  ]
  for (const [config, message] of bad) {
    assert.throws(() => checkConfig(config), (e) => e instanceof InvalidProcessOptionError && message.test(e.message), `${JSON.stringify(config)}`)
  }
})

test('a bad YAML file, and a name given twice, are refused with the line and column', (t) => {
  const broken = configFile(t, 'procvisor.config.yaml', 'processes:\n  db:\n    command: node db.js\n    readiness: { port: 5432\n  api:\n    command: x\n')
  assert.throws(() => loadConfig(broken), (e) => e instanceof InvalidProcessOptionError && /procvisor\.config\.yaml:5:\d+: not YAML \(line 5, column \d+\)/.test(e.message))
  const twice = configFile(t, 'procvisor.config.yml', 'processes:\n  db:\n    command: a\n  db:\n    command: b\n')
  assert.throws(() => loadConfig(twice), (e) => e instanceof InvalidProcessOptionError && /:4:3: not YAML \(line 4, column 3\): Map keys must be unique/.test(e.message))
  const json = configFile(t, 'procvisor.config.json', '{\n  "processes": {\n    "a": { "command": "x" },\n  }\n}\n')
  assert.throws(() => loadConfig(json), (e) => e instanceof InvalidProcessOptionError && /procvisor\.config\.json:4:3: not JSON/.test(e.message))
  const wrong = configFile(t, 'procvisor.config.yaml', 'processes:\n  db:\n    command: a\n    restart: always\n')
  assert.throws(() => loadConfig(wrong), (e) => e instanceof InvalidProcessOptionError && /procvisor\.config\.yaml: processes\.db\.restart: must be an object, not string/.test(e.message))
})

test('pm.up() starts in dependency order, waiting for each condition, and down() stops in reverse through each shutdown', async (t) => {
  const { dir, pm } = managerIn(t)
  const port = await freePort()
  // Each program notes its start, and the signal that ended it, in events.log.
  const note = (name, signal) =>
    `const fs=require('fs');const n=(w)=>fs.appendFileSync('events.log',w+' ${name} '+Date.now()+'\\n');n('start');process.on('${signal}',()=>{n('stop:${signal}');process.exit(0)});`
  const config = {
    processes: {
      worker: { command: ['node', '-e', `${note('worker', 'SIGHUP')}setInterval(()=>{},1000)`], dependsOn: { migrate: 'completed-successfully', server: 'ready' }, shutdown: { signal: 'SIGHUP' } },
      migrate: { command: `node -e "require('fs').appendFileSync('events.log','start migrate '+Date.now()+'\\n')"`, dependsOn: { server: 'started' } },
      server: {
        command: ['node', '-e', `${note('server', 'SIGTERM')}setTimeout(()=>require('net').createServer().listen(${port},'127.0.0.1'),1000)`],
        readiness: { port, periodMs: 50 },
        shutdown: { signal: 'SIGTERM' },
      },
    },
  }
  const result = await pm.up(config)
  assert.deepEqual(result, { started: ['server', 'migrate', 'worker'], running: [] })
  const events = () => fs.readFileSync(path.join(dir, 'events.log'), 'utf8').trim().split('\n').map((l) => l.split(' '))
  const at = (what, name) => Number(events().find((e) => e[0] === what && e[1] === name)?.[2])
  while (!at('start', 'worker')) await new Promise((r) => setTimeout(r, 20))
  assert.ok(at('start', 'migrate') - at('start', 'server') < 1000, 'migrate waits for the server to be started only, not to listen')
  assert.ok(at('start', 'worker') - at('start', 'server') >= 1000, 'the worker waits for the server to listen, 1 s after its start')
  assert.ok(at('start', 'migrate') < at('start', 'worker'), 'the worker waits for migrate to complete')

  // Brought up again, what runs is joined, not started twice.
  assert.deepEqual(await pm.up({ processes: { server: config.processes.server } }), { started: [], running: ['server'] })
  assert.equal((await pm.listProcesses()).filter((p) => p.name === 'server').length, 1)

  assert.deepEqual(await pm.down(config), { stopped: ['worker', 'server'] })
  assert.ok(at('stop:SIGHUP', 'worker') <= at('stop:SIGTERM', 'server'), 'the worker is stopped first, with its own signal')
  for (const p of await pm.listProcesses()) assert.equal(p.state, 'exited', p.name)
})

test('a dependency that exits before it is ready fails its dependant, naming both, and the dependant never starts', async (t) => {
  const { dir, pm } = managerIn(t)
  const port = await freePort()
  const config = {
    processes: {
      db: { command: 'echo no disk; exit 3', readiness: { port, periodMs: 50 } },
      api: { command: 'touch api-ran; sleep 30', dependsOn: { db: 'ready' } },
      worker: { command: 'touch worker-ran; sleep 30', dependsOn: { api: 'started' } },
    },
  }
  const err = await pm.up(config).then(() => null, (e) => e)
  assert.ok(err instanceof ProcessExitedBeforeReadyError, String(err))
  assert.match(err.message, /api depends on db being ready, and db exited with code 3 before it was ready/)
  assert.equal(err.process, 'api')
  assert.equal(err.dependency, 'db')
  assert.equal(err.exitCode, 3)
  assert.deepEqual((await pm.listProcesses()).map((p) => p.name), ['db'])
  assert.equal(fs.existsSync(path.join(dir, 'api-ran')), false)
  assert.equal(fs.existsSync(path.join(dir, 'worker-ran')), false)

  const unsuccessful = { processes: { build: { command: 'exit 2' }, app: { command: 'sleep 30', dependsOn: { build: 'completed-successfully' } } } }
  await assert.rejects(pm.up(unsuccessful), /app depends on build being completed-successfully, and build exited with code 2, not 0/)
})

test('a bad config, a cycle, and a value only the spawn checks leave nothing running', async (t) => {
  const { dir, pm } = managerIn(t)
  await assert.rejects(pm.up({ processes: { a: { command: 'touch a; sleep 30', dependsOn: { b: 'started' } }, b: { command: 'sleep 30', dependsOn: { a: 'started' } } } }), (e) => e instanceof InvalidProcessOptionError && /cycle/.test(e.message))
  await assert.rejects(pm.up({ processes: { a: { command: 'sleep 30', dependsOn: { nope: 'started' } } } }), InvalidProcessOptionError)
  assert.deepEqual(await pm.listProcesses(), [])
  // The restart policy's values are the spawn's own rule: met at the second process, after the first started.
  const late = { processes: { first: { command: 'touch first; sleep 30' }, second: { command: 'sleep 30', dependsOn: { first: 'started' }, restart: { policy: 'sometimes' } } } }
  await assert.rejects(pm.up(late), (e) => e instanceof InvalidProcessOptionError && /^processes\.second: /.test(e.message) && /policy/.test(e.message))
  const left = await pm.listProcesses()
  assert.deepEqual(left.map((p) => [p.name, p.state]), [['first', 'exited']])
})

test("a file's stack runs in the file's directory, and a process's cwd is relative to it", (t) => {
  const file = configFile(t, 'procvisor.config.yaml', 'processes:\n  web: { command: "true", cwd: site }\n  jobs: { command: [node, jobs.js] }\n')
  const dir = path.dirname(file)
  const config = loadConfig(file)
  assert.equal(config.workingDirectory, dir)
  assert.equal(specOf(config, 'web').cwd, path.join(dir, 'site'))
  assert.equal(specOf(config, 'jobs').cwd, dir)
  const moved = configFile(t, 'procvisor.config.json', JSON.stringify({ workingDirectory: 'app', processes: { web: { command: 'true', cwd: 'site' } } }))
  assert.equal(specOf(loadConfig(moved), 'web').cwd, path.join(path.dirname(moved), 'app', 'site'))
})

test('an abort ends the wait for a dependency that never gets ready; the dependant is not started', async (t) => {
  const { dir, pm } = managerIn(t)
  const port = await freePort()
  const config = {
    processes: {
      slow: { command: 'sleep 30', readiness: { port, periodMs: 50 } },
      app: { command: 'touch app-ran; sleep 30', dependsOn: { slow: 'ready' } },
    },
  }
  const began = Date.now()
  await assert.rejects(pm.up(config, { signal: AbortSignal.timeout(300) }), (e) => e instanceof ProcessAbortedError && /app was not started: .* waited for slow to be ready/.test(e.message))
  assert.ok(Date.now() - began < 5000)
  assert.deepEqual((await pm.listProcesses()).map((p) => [p.name, p.state]), [['slow', 'running']])
  assert.equal(fs.existsSync(path.join(dir, 'app-ran')), false)
})

test('close() takes a stack down first, in the reverse of its start order, each through its own shutdown', async (t) => {
  const dir = tempDir(t)
  const pm = new ProcessManager({ workingDirectory: dir })
  const note = (name, signal) =>
    `const fs=require('fs');const n=(w)=>fs.appendFileSync('events.log',w+' ${name} '+Date.now()+'\\n');n('start');process.on('${signal}',()=>{n('stop');process.exit(0)});setInterval(()=>{},1000)`
  await pm.up({
    processes: {
      db: { command: ['node', '-e', note('db', 'SIGTERM')], shutdown: { signal: 'SIGTERM' } },
      api: { command: ['node', '-e', note('api', 'SIGINT')], dependsOn: { db: 'started' }, shutdown: { signal: 'SIGINT' } },
      worker: { command: ['node', '-e', note('worker', 'SIGHUP')], dependsOn: { api: 'started' }, shutdown: { signal: 'SIGHUP' } },
    },
  })
  const log = path.join(dir, 'events.log')
  const events = () => (fs.existsSync(log) ? fs.readFileSync(log, 'utf8').trim().split('\n').map((l) => l.split(' ')) : [])
  // Each has installed its handler before it is stopped.
  while (events().filter((e) => e[0] === 'start').length < 3) await new Promise((r) => setTimeout(r, 20))
  await new Promise((r) => setTimeout(r, 200))
  await pm.close()
  const stops = events().filter((e) => e[0] === 'stop').map((e) => e[1])
  assert.deepEqual(stops, ['worker', 'api', 'db'])
})
