// Shared helpers of the procvisor/mastra tests: real processes, real @mastra/core.
import * as path from 'node:path'
import { fileURLToPath } from 'node:url'
import { createRequire } from 'node:module'

// alive() and eventually() are the JS suite's (one definition for both suites).
export const { alive, eventually, freePort, rejection, tempDir: madeTempDir } = createRequire(import.meta.url)('../helpers.js')

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')

/** A fresh real (symlink-free) temporary directory, removed when this test file's process exits. */
export function tempDir(prefix = 'procvisor-mastra-') {
  return madeTempDir(prefix)
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
