// The three sandboxes the project's own Mastra suites run against: Mastra's own LocalSandbox
// (execa), NativeLocalSandbox, and NativeLocalSandbox with `persistent: true` (its processes under
// a supervisor, a fresh id per sandbox). `make(options)` builds one; `end(sandbox)` destroys it
// and sweeps a supervisor a failed test left running.
import * as fs from 'node:fs'
import * as os from 'node:os'
import * as path from 'node:path'
import { after, afterEach, before, beforeEach, describe } from 'node:test'
import { LocalSandbox } from '@mastra/core/workspace'
import { NativeLocalSandbox } from 'procvisor/mastra'
import { tempDir } from './helpers.mjs'
import { freshId, startElsewhere, sweep } from './persistent-common.mjs'

export const BACKENDS = [
  { name: 'mastra', title: "Mastra's LocalSandbox", mastra: true, make: (options) => new LocalSandbox(options) },
  { name: 'native', title: 'NativeLocalSandbox', native: true, make: (options) => new NativeLocalSandbox(options) },
  {
    name: 'persistent',
    title: 'NativeLocalSandbox, persistent',
    native: true,
    persistent: true,
    make: (options) => new NativeLocalSandbox({ id: freshId(), persistent: true, ...options }),
  },
]

/**
 * One `describe(`${title}: <backend>`)` block a backend named in `names` (in BACKENDS' order),
 * `body(backend)` its tests: a suite's one line for running on each backend.
 */
export function describeBackends(title, names, options, body) {
  if (typeof options === 'function') [options, body] = [{}, options]
  for (const name of names) if (!BACKENDS.some((b) => b.name === name)) throw new Error(`no backend ${name}`)
  for (const backend of BACKENDS.filter((b) => names.includes(b.name))) describe(`${title}: ${backend.title}`, options, () => body(backend))
}

/**
 * The sandboxes and the directory of each test of the describe block it is called in, on
 * `backend`: `dir` is a fresh directory made before each test and removed after it; `make(options)`
 * builds a sandbox with `defaults(dir)` under the call's options (working directory `<dir>/wd`
 * unless they say otherwise); `start(options)` builds one and starts it. Every sandbox made is
 * ended after its test, its supervisor too.
 */
export function perTest(backend, { prefix = 'procvisor-mastra-', defaults = () => ({}) } = {}) {
  let dir
  const made = []
  beforeEach(() => {
    dir = tempDir(prefix)
  })
  afterEach(async () => {
    for (const sb of made.splice(0)) await end(sb)
    fs.rmSync(dir, { recursive: true, force: true })
  })
  const make = (options) => {
    const sb = backend.make({ workingDirectory: path.join(dir, 'wd'), ...defaults(dir), ...options })
    made.push(sb)
    return sb
  }
  return {
    get dir() {
      return dir
    },
    make,
    async start(options) {
      const sb = make(options)
      await sb.start()
      return sb
    },
  }
}

/**
 * Persistent sandboxes each started by a Node process of its own that then exits, for a file's
 * tests of what another process (the command line) sees: `startIn(id, script, options)` starts
 * sandbox `id` (a fresh one by default) in `<dir>/<id>`, runs `script` there after start() and
 * resolves with what it printed, its `id` and its working directory `wd`. After the file, every
 * such supervisor is shut down and the directory removed.
 */
export function startedElsewhere(prefix) {
  const children = []
  const ids = []
  let dir
  before(() => {
    dir = tempDir(prefix)
  })
  after(async () => {
    for (const id of ids) await sweep(id)
    for (const c of children) c.kill('SIGKILL')
    fs.rmSync(dir, { recursive: true, force: true })
  })
  return {
    get dir() {
      return dir
    },
    async startIn(id = freshId(), script = 'console.log(JSON.stringify({}))', options = '') {
      ids.push(id)
      const wd = path.join(dir, id)
      const c = startElsewhere(children, { id, workingDirectory: wd, options }, script)
      const first = await c.first
      await c.exited
      return { id, ...first, wd }
    },
  }
}

/**
 * A file's sandbox maker: `make(options)` builds a NativeLocalSandbox with `defaults()` (read at
 * each call: a test's directory changes) under the call's options, and records it in `made` for
 * the file's cleanup.
 */
export function sandboxMaker(made, defaults = () => ({})) {
  return (options) => {
    const sb = new NativeLocalSandbox({ ...defaults(), ...options })
    made.push(sb)
    return sb
  }
}

/** Destroys `sb` (its supervisor too), whatever state a test left it in. */
export async function end(sb) {
  await sb._destroy().catch(() => {})
  if (sb.persistent) await sweep(sb.id)
}

/**
 * Keeps Node's event loop alive until the returned function is called. A persistent sandbox's
 * connection holds it only while a call or a wait() is pending, by design, so a test that awaits
 * output through listeners alone would otherwise end with the loop.
 */
export function holdLoop() {
  const timer = setInterval(() => {}, 1 << 30)
  return () => clearInterval(timer)
}

/** The reason a test about what only `backends` have is skipped on `backend`, else false. */
export function onlyOn(backend, names, why) {
  return !names.includes(backend.name) && `${backend.title}: ${why}`
}

/**
 * Puts this test process's persistent sandboxes in a socket directory of its own (a private
 * XDG_RUNTIME_DIR), so that the fixed ids of a suite never meet another run's supervisors.
 */
export function privateSockets() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'procvisor-run-'))
  process.env.XDG_RUNTIME_DIR = dir
  process.on('exit', () => fs.rmSync(dir, { recursive: true, force: true }))
  return dir
}
