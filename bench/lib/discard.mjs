// Outputs of the checkpoint sections, put out of the way without being removed until the end.
//
// ext4 without a journal skips, at every create, each free inode of the group that was freed in
// the last minute (five more while its inode table block is dirty), reading that block to know
// (`find_inode_bit`, `recently_deleted`). Removing a 16,000-file output just before the next
// contender made that contender pay for it at every file it made: a full restore took 0.47-0.78 s
// depending on its place in the rotation, against 0.41-0.44 s with nothing removed for minutes,
// and `cp -a` paid it too. That cost is the bench's own removals, not the contenders': the
// outputs are renamed aside, and removed with the section's directory. (A run of the section
// within minutes of another's end still pays for that one's removal.)
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
