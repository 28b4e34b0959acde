// Runs the Mastra suites that compare the three sandboxes (conformance, parity, lifecycle) N
// times in a row (default 10) and reports, test by test:
//   - a test whose outcome changed from one run to another (a flake);
//   - a test whose outcome differs between the sandboxes, skips with a reason aside;
//   - the counts of each run.
// Exit status 0 when every run gave the same outcomes and every backend passed what the others
// passed, 1 otherwise. Usage: node scripts/node22.js scripts/repeat-suites.mjs [runs] [files...]
import { spawnSync } from 'node:child_process'
import * as path from 'node:path'
import { fileURLToPath } from 'node:url'

const root = path.join(path.dirname(fileURLToPath(import.meta.url)), '..')
const runs = Number(process.argv[2] ?? 10)
const files = process.argv.slice(3)
const suites = files.length ? files : ['conformance', 'parity', 'lifecycle'].map((n) => `__test__/mastra/${n}.test.mjs`)
if (!Number.isInteger(runs) || runs < 1) {
  console.error('usage: repeat-suites.mjs [runs] [files...]')
  process.exit(2)
}

// The backends' titles as the suites name them (backends.mjs), longest first: one contains another.
const TITLES = ['NativeLocalSandbox, persistent', 'NativeLocalSandbox', "Mastra's LocalSandbox"]

/** The test's name with its backend taken out, and the backend. */
function split(names) {
  const joined = names.join(' › ')
  for (const title of TITLES) {
    if (joined.includes(title)) return { key: joined.replace(title, '<sandbox>'), backend: title }
  }
  return { key: joined, backend: '' }
}

const history = new Map() // `${file} ${name}` -> [outcome per run]
const byBackend = new Map() // `${file} ${key} ${run}` -> Map(backend -> outcome)
const errors = new Map()
for (let run = 0; run < runs; run++) {
  const started = Date.now()
  const r = spawnSync(
    process.execPath,
    ['--test', '--test-concurrency=1', '--test-timeout=120000', '--test-force-exit', `--test-reporter=${path.join(root, 'scripts/outcomes-reporter.mjs')}`, ...suites],
    { cwd: root, encoding: 'utf8', maxBuffer: 64 << 20 },
  )
  const counts = { pass: 0, fail: 0, skip: 0, todo: 0 }
  for (const text of r.stdout.split('\n')) {
    if (!text.startsWith('{')) continue
    const t = JSON.parse(text)
    counts[t.outcome]++
    const file = path.basename(t.file ?? '')
    const id = `${file} ${t.names.join(' › ')}`
    if (!history.has(id)) history.set(id, [])
    history.get(id)[run] = t.outcome
    if (t.error) errors.set(id, t.error)
    const { key, backend } = split(t.names)
    if (!backend) continue
    const k = `${file} ${key}`
    if (!byBackend.has(k)) byBackend.set(k, new Map())
    byBackend.get(k).set(`${backend}#${run}`, t.outcome)
  }
  console.log(`run ${run + 1}/${runs}: ${counts.pass} passed, ${counts.fail} failed, ${counts.skip} skipped (${((Date.now() - started) / 1000).toFixed(0)} s, exit ${r.status})`)
}

let problems = 0
for (const [id, outcomes] of history) {
  const seen = new Set(outcomes)
  if (seen.size > 1 || outcomes.length < runs) {
    problems++
    console.log(`changed between runs: ${id}: ${Array.from({ length: runs }, (_, i) => outcomes[i] ?? 'absent').join(' ')}`)
  }
  if (seen.has('fail')) {
    problems++
    console.log(`failed: ${id}: ${errors.get(id)}`)
  }
}
for (const [k, results] of byBackend) {
  for (let run = 0; run < runs; run++) {
    const row = TITLES.map((t) => results.get(`${t}#${run}`)).filter((o) => o !== undefined && o !== 'skip')
    if (new Set(row).size > 1) {
      problems++
      console.log(`differs between sandboxes in run ${run + 1}: ${k}: ${TITLES.map((t) => `${t}=${results.get(`${t}#${run}`)}`).join(', ')}`)
    }
  }
}
console.log(problems ? `${problems} difference(s)` : `${runs} runs, ${history.size} tests: the same outcome in every run, and on every sandbox that runs the test`)
process.exit(problems ? 1 : 0)
