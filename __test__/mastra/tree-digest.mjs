// A digest of a directory tree for the checkpoint tests: every path with its type, mode, mtime
// (to the nanosecond), link target, content hash, and whether a file keeps holes (fewer blocks
// than its size), so a restore that filled a sparse file's holes differs from one that kept them.
import * as crypto from 'node:crypto'
import * as fs from 'node:fs'
import * as path from 'node:path'

/** One line per entry, the root first as ".", sorted by path. */
export function treeLines(root) {
  const line = (p, rel) => {
    const st = fs.lstatSync(p, { bigint: true })
    let what
    if (st.isSymbolicLink()) what = `link -> ${fs.readlinkSync(p)}`
    else if (st.isDirectory()) what = `dir mode ${(st.mode & 0o7777n).toString(8)}`
    else if (st.isFile()) {
      const hash = crypto.createHash('sha256').update(fs.readFileSync(p)).digest('hex').slice(0, 16)
      what = `file mode ${(st.mode & 0o7777n).toString(8)} size ${st.size} ${st.blocks * 512n < st.size ? 'sparse' : 'dense'} ${hash}`
    } else what = `other ${st.mode.toString(8)}`
    return `${rel}: ${what} mtime ${st.mtimeNs}`
  }
  const out = [line(root, '.')]
  const walk = (dir) => {
    for (const name of fs.readdirSync(dir).sort()) {
      const p = path.join(dir, name)
      out.push(line(p, path.relative(root, p)))
      if (fs.lstatSync(p).isDirectory()) walk(p)
    }
  }
  walk(root)
  return out
}

/** The digest of a tree: a hash of its lines. */
export const treeDigest = (root) => crypto.createHash('sha256').update(treeLines(root).join('\n')).digest('hex')

/** The lines of `a` missing from `b` and of `b` missing from `a`, for a failure message. */
export function treeDifference(a, b) {
  const [la, lb] = [treeLines(a), treeLines(b)]
  return { onlyFirst: la.filter((l) => !lb.includes(l)), onlySecond: lb.filter((l) => !la.includes(l)) }
}

/** Waits past the margin a capture's record needs before it vouches for a file (2 s). */
export const settle = () => new Promise((r) => setTimeout(r, 2300))
