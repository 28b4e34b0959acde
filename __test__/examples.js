'use strict'
// The README's code, as files that run. Every JavaScript block of README.md and docs/*.md is one
// file of examples/ word for word (named on its first line), and every example runs here as a new
// user would run it: copied into a fresh project, from that directory, with its relative paths.
// The suites run them against this checkout; `npm run test:install` runs them again in a project
// that installed the packed tarballs.
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { spawnSync } = require('node:child_process')
const { freePort } = require('./helpers')

const ROOT = path.resolve(__dirname, '..')
const EXAMPLES = path.join(ROOT, 'examples')

/** The example files of examples/ (a directory there, such as stack/, has a test of its own). */
function exampleFiles() {
  return fs
    .readdirSync(EXAMPLES, { withFileTypes: true })
    .filter((d) => d.isFile())
    .map((d) => d.name)
}

/** The fenced JavaScript/TypeScript blocks of the README and docs: `{ where, name, code }`. */
function documentedBlocks(root = ROOT) {
  const files = [path.join(root, 'README.md'), ...fs.readdirSync(path.join(root, 'docs')).filter((f) => f.endsWith('.md')).map((f) => path.join(root, 'docs', f))]
  const out = []
  for (const file of files) {
    const text = fs.readFileSync(file, 'utf8')
    for (const m of text.matchAll(/^```(js|mjs|cjs|ts|javascript|typescript)\n([\s\S]*?)^```$/gm)) {
      const code = m[2]
      const named = /^\/\/ examples\/([\w.-]+)/.exec(code)
      const line = text.slice(0, m.index).split('\n').length
      out.push({ where: `${path.relative(root, file)}:${line}`, name: named ? named[1] : null, code })
    }
  }
  return out
}

/**
 * A fresh project in a temporary directory holding the examples. `link` (for the suites) makes
 * node_modules/procvisor a link to this checkout and @mastra/core a link to the checkout's copy;
 * without it the caller provides node_modules (the install test).
 */
function freshProject({ link = true } = {}) {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'procvisor-examples-')))
  for (const f of exampleFiles()) fs.copyFileSync(path.join(EXAMPLES, f), path.join(dir, f))
  if (link) {
    fs.mkdirSync(path.join(dir, 'node_modules', '@mastra'), { recursive: true })
    fs.symlinkSync(ROOT, path.join(dir, 'node_modules', 'procvisor'))
    fs.symlinkSync(path.join(ROOT, 'node_modules', '@mastra', 'core'), path.join(dir, 'node_modules', '@mastra', 'core'))
  }
  // A private socket directory, so the persistent example's id never meets another sandbox's.
  const runtime = path.join(dir, '.runtime')
  fs.mkdirSync(runtime, { mode: 0o700 })
  return { dir, env: { ...process.env, XDG_RUNTIME_DIR: runtime } }
}

/** Runs `node <file> <args>` in the project; returns its stdout, throws with its output unless it exits 0. */
function run(node, project, file, args = [], env = {}) {
  const r = spawnSync(node, [file, ...args], { cwd: project.dir, env: { ...project.env, ...env }, encoding: 'utf8', timeout: 90_000 })
  if (r.status !== 0) {
    throw new Error(`node ${file} ${args.join(' ')}: ${r.error ? r.error.message : `exit ${r.status ?? r.signal}`}\n${r.stdout}${r.stderr}`.slice(-4000))
  }
  return r.stdout
}

function expectLines(out, patterns, file) {
  for (const re of patterns) if (!re.test(out)) throw new Error(`${file}: no line matching ${re} in:\n${out}`)
}

function alive(pid) {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

/** Each example with how it is run and what it must print. `mastra`: needs @mastra/core (Node >= 22.13). */
const examples = [
  {
    file: 'quick-start.mjs',
    mastra: false,
    async run(node, project) {
      const port = await freePort()
      const out = run(node, project, this.file, [], { PORT: String(port) })
      expectLines(out, [/^dev: listening$/m, /^0 v\d+\.\d+\.\d+$/m, /^0 built$/m], this.file)
    },
  },
  {
    file: 'dev-server.mjs',
    mastra: false,
    async run(node, project) {
      const port = await freePort()
      const out = run(node, project, this.file, [], { PORT: String(port) })
      expectLines(out, [/^ok$/m, /^restart 1 after exit 1$/m, /^running 1 1$/m, /^ended 15 1$/m], this.file)
    },
  },
  {
    file: 'probes.mjs',
    mastra: false,
    async run(node, project) {
      const port = await freePort()
      const out = run(node, project, this.file, [], { PORT: String(port) })
      const failed = new RegExp(`^liveness failed: 2 failures in a row; GET http://localhost:${port}/health: HTTP status 500 is outside 200-399$`, 'm')
      expectLines(out, [/^readiness passed$/m, failed, /^restarts 1$/m, /^stopped with code 0 true$/m], this.file)
    },
  },
  {
    file: 'terminal.mjs',
    mastra: false,
    async run(node, project) {
      const out = run(node, project, this.file)
      expectLines(out, [/^six times seven is 42 \{ row: \d+, col: \d+ \}$/m, /^terminated by 9$/m, /^printed something$/m], this.file)
    },
  },
  {
    file: 'web-view.mjs',
    mastra: false,
    async run(node, project) {
      const out = run(node, project, this.file)
      expectLines(out, [/^http:\/\/127\.0\.0\.1:\d+\/\?token=[\w-]{43}$/m, /^303 the page lists the terminal$/m, /^403 without the token$/m], this.file)
    },
  },
  {
    file: 'mastra-workspace.mjs',
    mastra: true,
    async run(node, project) {
      const out = run(node, project, this.file)
      expectLines(out, [new RegExp(`^0 hello from ${escape(path.join(project.dir, 'workspace'))}$`, 'm')], this.file)
    },
  },
  {
    file: 'agent-processes.mjs',
    mastra: true,
    async run(node, project) {
      const port = await freePort()
      const out = run(node, project, this.file, [], { PORT: String(port) })
      expectLines(out, [/^ready true log listening and a cursor$/m, /^terminal shows 42$/m], this.file)
    },
  },
  {
    file: 'checkpoints.mjs',
    mastra: true,
    async run(node, project) {
      const out = run(node, project, this.file)
      expectLines(out, [/^console\.log\("v1"\) 1 removed$/m, /^true$/m], this.file)
    },
  },
  {
    file: 'persistent-first.mjs',
    also: 'persistent-second.mjs',
    mastra: true,
    async run(node, project) {
      const first = run(node, project, this.file)
      const m = /^started (\d+) (\S+)$/m.exec(first)
      if (!m) throw new Error(`${this.file}: no "started <pid> <cursor>" line in:\n${first}`)
      const pid = Number(m[1])
      try {
        if (!alive(pid)) throw new Error(`${this.file}: the server (pid ${pid}) did not outlive the Node process that started it`)
        const second = run(node, project, this.also, [m[1], m[2]])
        expectLines(second, [/^joined tick \d+$/m], this.also)
        for (let i = 0; i < 100 && alive(pid); i++) spawnSync('sleep', ['0.05'])
        if (alive(pid)) throw new Error(`${this.also}: the server (pid ${pid}) is alive after stop()`)
      } finally {
        ownedBy(project).forEach((p) => process.kill(p, 'SIGKILL'))
      }
    },
  },
]

/** Live processes started with the project's private socket directory: what a failed run left behind. */
function ownedBy(project) {
  const needle = `XDG_RUNTIME_DIR=${project.env.XDG_RUNTIME_DIR}`
  const out = []
  for (const d of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(d) || Number(d) === process.pid) continue
    try {
      if (fs.readFileSync(`/proc/${d}/environ`, 'utf8').split('\0').includes(needle)) out.push(Number(d))
    } catch {}
  }
  return out
}

function escape(s) {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
}

module.exports = { ROOT, EXAMPLES, exampleFiles, documentedBlocks, freshProject, examples, ownedBy }
