// The tables and targets of checkpoints that cost what changed (bench/sections/checkpoints-incremental.mjs).

import { fmt, median, table } from './stats.mjs'

/** a[i] ÷ b[i] for each round: { med, min, max }, or undefined. */
function perRound(a, b) {
  const r = a.map((x, i) => x / b[i]).filter(Number.isFinite).sort((x, y) => x - y)
  if (r.length === 0) return undefined
  return { med: r[Math.floor((r.length - 1) / 2)], min: r[0], max: r.at(-1) }
}

const spread = (q) => (q ? `${fmt(q.med, 3)}× (${fmt(q.min, 3)}–${fmt(q.max, 3)})` : 'n/a')
const verdict = (ok) => (ok === undefined ? 'n/a' : ok ? 'met' : 'MISSED')
const secs = (xs) => {
  const s = [...xs].sort((a, b) => a - b)
  return [fmt(median(xs), 3), `${fmt(s[0], 3)}–${fmt(s.at(-1), 3)}`]
}

/** The ratios the targets are about. */
function ratios(inc) {
  return {
    capture: perRound(inc.capture.incremental, inc.capture.full),
    disk: perRound(inc.disk.incremental, inc.disk.full),
    restore: perRound(inc.restore.inPlace, inc.restore.full),
    linkFloor: inc.capture.linkFloor?.length ? perRound(inc.capture.linkFloor, inc.capture.full) : undefined,
    statFloor: inc.restore.statFloor?.length ? perRound(inc.restore.statFloor, inc.restore.full) : undefined,
  }
}

export function incrementalTables(inc) {
  const r = ratios(inc)
  const mb = (xs) => fmt(median(xs) / 1e6, 1)
  const lines = [
    `**Checkpoints that cost what changed** (${inc.rounds} rounds; each round changes ${fmt(inc.changed, 0)} of the ${fmt(inc.files, 0)} small files, 1%, and waits 2.3 s, then runs the contenders of each pair interleaved)`,
    '',
    table(
      ['contender', 'median s', 'min–max s', 'MB written (median)', 'this ÷ the full one, per round (median, min–max)'],
      [
        ['`checkpoints.capture()`, sharing unchanged files with the last capture', ...secs(inc.capture.incremental), mb(inc.newBytes.capture), spread(r.capture)],
        ['full capture (no previous capture to share with)', ...secs(inc.capture.full), '—', '—'],
        ...(r.linkFloor ? [['floor of a capture by hard links: `cp -al` of the last capture, 4 at once', ...secs(inc.capture.linkFloor), '—', spread(r.linkFloor)]] : []),
        ['`checkpoints.restore()` of a tree 1% different, in place', ...secs(inc.restore.inPlace), mb(inc.newBytes.restore), spread(r.restore)],
        ['full restore (`start()` into an empty directory)', ...secs(inc.restore.full), '—', '—'],
        ...(r.statFloor ? [['floor of a restore in place: `find -printf` of the working tree, 4 at once', ...secs(inc.restore.statFloor), '—', spread(r.statFloor)]] : []),
      ],
    ),
    '',
    `New disk use of a capture (directories, files no other checkpoint links, its record): incremental ${fmt(median(inc.disk.incremental) / 1e6, 1)} MB, full ${fmt(median(inc.disk.full) / 1e6, 1)} MB, per round ${spread(r.disk)}.`,
    '',
  ]
  return lines.join('\n')
}

export function incrementalTargets(snap) {
  const inc = snap.incremental
  if (!inc) return []
  const r = ratios(inc)
  const state = snap.state
  return [
    [`incremental checkpoint capture (1% of ${fmt(inc.files, 0)} files changed) ≤ 0.1× a full capture (${state} cache)`, `incremental ÷ full = ${spread(r.capture)}${r.linkFloor ? `; the hard-link floor (cp -al) ÷ full = ${spread(r.linkFloor)}` : ''}`, verdict(r.capture && r.capture.med <= 0.1)],
    ['new disk use of an incremental capture ≤ 0.15× a full one', `incremental ÷ full = ${spread(r.disk)}`, verdict(r.disk && r.disk.med <= 0.15)],
    [`checkpoints.restore() of a tree 1% different ≤ 0.1× a full restore (${state} cache)`, `in place ÷ start() into an empty directory = ${spread(r.restore)}${r.statFloor ? `; the stat floor (find) ÷ full = ${spread(r.statFloor)}` : ''}`, verdict(r.restore && r.restore.med <= 0.1)],
  ]
}
