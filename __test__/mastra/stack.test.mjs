// Stacks of services in persistent sandboxes: examples/stack/ (the README's "Run a stack"), as it
// is, through `procvisor up` / `down` and through `sandbox.processes.up()` / `down()`, with real
// programs on real ports; and the mistakes refused before anything starts.
import { describe, it, before, after, afterEach } from 'node:test'
import assert from 'node:assert/strict'
import * as fs from 'node:fs'
import * as path from 'node:path'
import { execFile, spawn } from 'node:child_process'
import { createRequire } from 'node:module'
import { tempDir, sleep } from './helpers.mjs'
import { BIN, sweep, freshId } from './persistent-common.mjs'
import { privateSockets } from './backends.mjs'

const require = createRequire(import.meta.url)
const { InvalidProcessOptionError, ProcessExitedBeforeReadyError } = require('../../index.js')
const { NativeLocalSandbox } = require('../../mastra/index.js')

privateSockets()
const ROOT = path.resolve(import.meta.dirname, '../..')
const STACK = path.join(ROOT, 'examples', 'stack')
const dirs = []

/** A copy of examples/stack/, as a user would have it. */
function stackCopy() {
  const dir = tempDir('procvisor-stack-')
  dirs.push(dir)
  for (const f of fs.readdirSync(STACK)) fs.copyFileSync(path.join(STACK, f), path.join(dir, f))
  return dir
}

/** `procvisor ...args` run in `cwd`: its exit status, stdout and stderr. */
function cli(cwd, ...args) {
  return new Promise((resolve) => {
    execFile(process.execPath, [BIN, ...args], { cwd, encoding: 'utf8' }, (error, out, err) => resolve({ status: error ? error.code : 0, out, err }))
  })
}

/** The events the stack's programs noted: `at(what, name)` is the time of one, NaN when missing. */
function events(dir) {
  const file = path.join(dir, 'events.log')
  const lines = fs.existsSync(file) ? fs.readFileSync(file, 'utf8').trim().split('\n') : []
  const list = lines.map((l) => l.split(' '))
  return { list, at: (what, name) => Number(list.find((e) => e[0] === what && e[1] === name)?.[2]) }
}

async function until(fn, ms = 20_000) {
  const end = Date.now() + ms
  while (!fn()) {
    if (Date.now() > end) throw new Error(`not met within ${ms} ms: ${fn}`)
    await sleep(25)
  }
}

const portAnswers = (port) => fetch(`http://127.0.0.1:${port}/health`).then((r) => r.ok, () => false)

afterEach(async () => {
  await sweep('shop')
})
after(() => {
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true })
})

/** What every start of the example must show: db, then api once the db answered, then worker. */
function assertStartedInOrder(dir) {
  const { at } = events(dir)
  assert.ok(at('listening', 'db') <= at('start', 'api'), 'the api starts only after the db listens')
  assert.ok(at('start', 'api') <= at('db-answered', 'api'), 'and the db answered the api')
  assert.ok(at('db-answered', 'api') < at('start', 'worker'), 'the worker starts only after the api is up')
}

/** What every end of the example must show: worker, api, db, each with its own signal. */
function assertStoppedInReverse(dir) {
  const { at } = events(dir)
  const worker = at('stop:SIGHUP', 'worker')
  const api = at('stop:SIGINT', 'api')
  const db = at('stop:SIGTERM', 'db')
  assert.ok(worker <= api && api <= db, `stopped: worker ${worker}, api ${api}, db ${db}`)
}

describe('procvisor up and down', () => {
  it('the README config is shown word for word and is examples/stack/procvisor.config.yaml', () => {
    const readme = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8')
    const block = /```yaml\n(# examples\/stack\/procvisor\.config\.yaml[\s\S]*?)```/.exec(readme)
    assert.ok(block, 'no YAML block of examples/stack/procvisor.config.yaml in the README')
    assert.equal(block[1], fs.readFileSync(path.join(STACK, 'procvisor.config.yaml'), 'utf8'))
  })

  it('up --detach brings examples/stack up in dependency order, a second up joins it, down stops it in reverse', async () => {
    const dir = stackCopy()
    const first = await cli(dir, 'up', '--detach')
    assert.equal(first.status, 0, first.err)
    const lines = first.err.split('\n')
    const line = (re) => lines.findIndex((l) => re.test(l))
    assert.match(first.err, /^sandbox shop: started/)
    assert.ok(line(/^db: started \(pid \d+\)/) < line(/^db: ready/), first.err)
    assert.ok(line(/^db: ready/) < line(/^api: started/) && line(/^api: started/) < line(/^api: healthy/), first.err)
    assert.ok(line(/^api: healthy/) < line(/^worker: started/), first.err)
    assert.match(first.err, /up: 3 started\n/)
    await until(() => !Number.isNaN(events(dir).at('start', 'worker')))
    assertStartedInOrder(dir)
    assert.equal(await portAnswers(47012), true, 'the api answers after up has ended: the sandbox runs on')

    const again = await cli(dir, 'up', '--detach')
    assert.equal(again.status, 0, again.err)
    assert.match(again.err, /^sandbox shop: joined/)
    assert.match(again.err, /up: 0 started, 3 already running/)
    assert.equal(events(dir).list.filter((e) => e[0] === 'start').length, 3, 'nothing started twice')

    const down = await cli(dir, 'down')
    assert.equal(down.status, 0, down.err)
    assert.match(down.err, /worker: stopped[\s\S]*api: stopped[\s\S]*db: stopped[\s\S]*down: 3 stopped, sandbox shop stopped/)
    assertStoppedInReverse(dir)
    assert.match((await cli(dir, 'ls')).out, /no persistent sandboxes are running/)
    assert.equal(await portAnswers(47012), false)
  })

  it('up follows every process\'s lines by name; Ctrl-C detaches and the stack runs on', async () => {
    const dir = stackCopy()
    const child = spawn(process.execPath, [BIN, 'up', '-f', path.join(dir, 'procvisor.config.yaml')], { cwd: ROOT })
    let out = ''
    child.stdout.on('data', (d) => (out += d))
    const exited = new Promise((resolve) => child.on('exit', (code) => resolve(code)))
    await until(() => /^worker +\| api says api$/m.test(out))
    assert.match(out, /^db +\| db listening on 47011$/m)
    child.kill('SIGINT')
    assert.equal(await exited, 0)
    assert.equal(await portAnswers(47012), true, 'the stack runs on')
    const down = await cli(ROOT, 'down', '-f', path.join(dir, 'procvisor.config.yaml'))
    assert.equal(down.status, 0, down.err)
    assertStoppedInReverse(dir)
  })

  it('a cycle, an unknown dependency, a bad YAML file and a name given twice are refused before any sandbox starts', async () => {
    const dir = tempDir('procvisor-stack-bad-')
    dirs.push(dir)
    const cases = [
      ['processes:\n  a: { command: "touch ran", dependsOn: { b: started } }\n  b: { command: "touch ran", dependsOn: { a: started } }\n', /processes: the dependencies make a cycle: a -> b -> a/],
      ['processes:\n  api: { command: "touch ran", dependsOn: { db: ready } }\n', /processes\.api\.dependsOn\.db: api depends on db, which is not a process of the stack/],
      ['processes:\n  db:\n    command: touch ran\n     readiness: 1\n', /procvisor\.config\.yaml:3:14: not YAML \(line 3, column 14\): Nested mappings are not allowed in compact mappings$/m],
      ['processes:\n  db: { command: "touch ran" }\n  db: { command: "touch ran" }\n', /procvisor\.config\.yaml:3:3: not YAML \(line 3, column 3\): Map keys must be unique/],
    ]
    for (const [text, message] of cases) {
      fs.writeFileSync(path.join(dir, 'procvisor.config.yaml'), text)
      const r = await cli(dir, 'up', '--detach')
      assert.equal(r.status, 1, r.err)
      assert.match(r.err, message)
      assert.match((await cli(dir, 'ls')).out, /no persistent sandboxes are running/)
      assert.equal(fs.existsSync(path.join(dir, 'ran')), false)
    }
  })

  it('a dependency that exits before it is ready fails up with both names; its dependant never starts, down stops the rest', async () => {
    const dir = tempDir('procvisor-stack-dep-')
    dirs.push(dir)
    const id = freshId()
    fs.writeFileSync(
      path.join(dir, 'procvisor.config.json'),
      JSON.stringify({
        id,
        processes: {
          cache: { command: 'sleep 30' },
          db: { command: 'echo no disk >&2; exit 3', readiness: { port: 47014, periodMs: 50 }, dependsOn: { cache: 'started' } },
          api: { command: 'touch api-ran; sleep 30', dependsOn: { db: 'ready' } },
        },
      }),
    )
    try {
      const r = await cli(dir, 'up', '--detach')
      assert.equal(r.status, 1, r.err)
      assert.match(r.err, /^procvisor: api depends on db being ready, and db exited with code 3 before it was ready: api was not started$/m)
      const ps = JSON.parse((await cli(dir, 'ps', id, '--json')).out)
      assert.deepEqual(ps.processes.map((p) => [p.name, p.state]).sort(), [['cache', 'running'], ['db', 'exited']])
      assert.equal(fs.existsSync(path.join(dir, 'api-ran')), false)
      const down = await cli(dir, 'down')
      assert.equal(down.status, 0, down.err)
      assert.match(down.err, /^cache: stopped/m)
      assert.match((await cli(dir, 'ls')).out, /no persistent sandboxes are running/)
    } finally {
      await sweep(id)
    }
  })

  it('--help says what up and down do', async () => {
    const up = await cli(ROOT, 'up', '--help')
    assert.equal(up.status, 0)
    assert.match(up.out, /usage: procvisor up \[-f FILE\] \[--detach\]/)
    assert.match(up.out, /dependsOn/)
    const down = await cli(ROOT, 'down', '--help')
    assert.match(down.out, /usage: procvisor down \[-f FILE\]/)
    assert.match(down.out, /reverse/)
  })
})

describe('sandbox.processes.up() and down()', () => {
  it('a persistent sandbox brings examples/stack up in order and down in reverse, each through its shutdown', async () => {
    const dir = stackCopy()
    const { loadConfig } = require('../../lib/stack/config.js')
    const config = loadConfig(path.join(dir, 'procvisor.config.yaml'))
    const sandbox = new NativeLocalSandbox({ id: config.id, workingDirectory: dir, persistent: true, timeoutMs: 120_000 })
    await sandbox.start()
    try {
      assert.deepEqual(await sandbox.processes.up(config), { started: ['db', 'api', 'worker'], running: [] })
      await until(() => !Number.isNaN(events(dir).at('start', 'worker')))
      assertStartedInOrder(dir)
      // Another Node process's view of the same sandbox joins what runs.
      const other = new NativeLocalSandbox({ id: config.id, workingDirectory: dir, persistent: true })
      await other.start()
      assert.deepEqual(await other.processes.up(config), { started: [], running: ['db', 'api', 'worker'] })
      await other.detach()
      assert.deepEqual(await sandbox.processes.down(), { stopped: ['worker', 'api', 'db'] })
      assertStoppedInReverse(dir)
      for (const p of await sandbox.processes.list()) assert.notEqual(p.exitCode, undefined, `${p.pid} still runs`)
    } finally {
      await sandbox.stop()
    }
  })

  for (const persistent of [false, true]) {
    it(`stop() of a ${persistent ? 'persistent' : 'local'} sandbox takes its stack down first, in reverse, each through its shutdown`, async () => {
      const dir = stackCopy()
      const { loadConfig } = require('../../lib/stack/config.js')
      const config = loadConfig(path.join(dir, 'procvisor.config.yaml'))
      const sandbox = new NativeLocalSandbox({ id: config.id, workingDirectory: dir, persistent, timeoutMs: 120_000 })
      await sandbox.start()
      try {
        await sandbox.processes.up(config)
        await until(() => !Number.isNaN(events(dir).at('start', 'worker')))
      } finally {
        await sandbox.stop()
      }
      assertStoppedInReverse(dir)
      // One after the other, each waited for: the order of the notes, not only their times.
      assert.deepEqual(events(dir).list.filter((e) => e[0].startsWith('stop:')).map((e) => e[1]), ['worker', 'api', 'db'])
    })
  }

  it('a local sandbox: a dependency that exits before ready fails the dependant with both names; a cycle starts nothing', async () => {
    const dir = tempDir('procvisor-stack-local-')
    dirs.push(dir)
    const sandbox = new NativeLocalSandbox({ id: freshId(), workingDirectory: dir })
    await sandbox.start()
    try {
      const cycle = { processes: { a: { command: 'touch a; sleep 30', dependsOn: { b: 'started' } }, b: { command: 'touch b; sleep 30', dependsOn: { a: 'started' } } } }
      await assert.rejects(sandbox.processes.up(cycle), (e) => e instanceof InvalidProcessOptionError && /cycle: a -> b -> a/.test(e.message))
      assert.deepEqual(await sandbox.processes.list(), [])
      const config = {
        processes: {
          db: { command: 'echo starting; exit 4', readiness: { port: 47013, periodMs: 50 } },
          api: { command: ['sh', '-c', 'touch api-ran; sleep 30'], dependsOn: { db: 'ready' } },
        },
      }
      const err = await sandbox.processes.up(config).then(() => null, (e) => e)
      assert.ok(err instanceof ProcessExitedBeforeReadyError, String(err))
      assert.match(err.message, /api depends on db being ready, and db exited with code 4 before it was ready: api was not started/)
      assert.deepEqual([err.process, err.dependency], ['api', 'db'])
      await sleep(200)
      assert.equal(fs.existsSync(path.join(dir, 'api-ran')), false)
      assert.equal((await sandbox.processes.list()).length, 1)
    } finally {
      await sandbox.stop()
    }
  })
})
