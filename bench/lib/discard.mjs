// Outputs of the checkpoint sections, put out of the way without being removed until the end.
//
// ext4 without a journal skips, at every create, each inode freed in the last 30 s, reading its
// table block to know (`find_inode_bit`, `recently_deleted`). Removing a 16,000-file output just
// before the next contender made every copy of the following 30 s pay for it, at every file it
// made: a full restore took 0.47-0.78 s depending on its place in the rotation, against 0.36 s
// with nothing freed nearby, and `cp -a` paid it too. That cost is the bench's own removals, not
// the contenders': the outputs are renamed aside, and removed with the section's directory.
import fs from 'node:fs'
import path from 'node:path'

/** Bytes an output set aside may take in all before the bench removes outputs at once again. */
const ROOM = 16 * 1024 ** 3

/**
 * A function that takes an output directory out of the way under `base` (renamed aside while the
 * filesystem has room for them, removed at once otherwise), and says which it does.
 */
export function discarder(base) {
  const aside = path.join(base, 'discarded')
  let n = 0
  const free = () => {
    try {
      const s = fs.statfsSync(base)
      return s.bavail * s.bsize
    } catch {
      return 0
    }
  }
  const keeps = free() > ROOM
  const discard = (dir) => {
    if (!fs.existsSync(dir)) return
    if (!keeps) return fs.rmSync(dir, { recursive: true, force: true })
    fs.mkdirSync(aside, { recursive: true })
    fs.renameSync(dir, path.join(aside, String(n++)))
  }
  discard.keeps = keeps
  return discard
}
