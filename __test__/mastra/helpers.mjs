// Shared helpers of the procvisor/mastra tests: real processes, real @mastra/core.
import * as fs from 'node:fs'
import * as os from 'node:os'
import * as path from 'node:path'
import { fileURLToPath } from 'node:url'

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')

/** A fresh real (symlink-free) temporary directory. */
export function tempDir(prefix = 'procvisor-mastra-') {
  return fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), prefix)))
}

/** Is `pid` a live process? Zombies count as dead (they hold no resources but a slot). */
export function alive(pid) {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8')
    const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3)
    return state !== 'Z' && state !== 'X'
  } catch {
    return false
  }
}

/** Polls `fn` until it returns truthy or `ms` pass; returns the last value. */
export async function eventually(fn, ms = 3000, step = 20) {
  const end = Date.now() + ms
  for (;;) {
    const v = await fn()
    if (v || Date.now() > end) return v
    await sleep(step)
  }
}

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms))

/** Resolves with the text collected by `onData` once it matches `re` (or rejects after `ms`). */
export function collector(re, ms = 5000) {
  let text = ''
  let resolve
  let reject
  const matched = new Promise((res, rej) => {
    resolve = res
    reject = rej
  })
  const timer = setTimeout(() => reject(new Error(`no output matching ${re} within ${ms} ms; got ${JSON.stringify(text)}`)), ms)
  const onData = (d) => {
    text += d
    const m = re.exec(text)
    if (m) {
      clearTimeout(timer)
      resolve(m)
    }
  }
  return { onData, matched, text: () => text }
}
