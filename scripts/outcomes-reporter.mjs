// A node:test reporter that prints one JSON line per test: its file, its path of names (the
// suites around it, then its own) and its outcome ('pass', 'fail', 'skip', 'todo'). Used by
// scripts/repeat-suites.mjs to compare runs and backends test by test.
export default async function* outcomes(source) {
  const stack = []
  for await (const event of source) {
    const { type, data } = event
    if (type === 'test:start') {
      stack.length = data.nesting
      stack[data.nesting] = data.name
      continue
    }
    if (type !== 'test:pass' && type !== 'test:fail') continue
    // A suite reports too; only leaves (tests without children) are counted.
    if (data.details?.type === 'suite') continue
    const names = [...stack.slice(0, data.nesting), data.name]
    const outcome = data.skip !== undefined ? 'skip' : data.todo !== undefined ? 'todo' : type === 'test:pass' ? 'pass' : 'fail'
    const line = { file: data.file, names, outcome }
    if (outcome === 'fail') line.error = String(data.details?.error?.cause?.message ?? data.details?.error?.message ?? '').slice(0, 300)
    if (outcome === 'skip' && typeof data.skip === 'string') line.reason = data.skip
    yield `${JSON.stringify(line)}\n`
  }
}
