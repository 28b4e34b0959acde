// Small statistics and formatting helpers shared by the bench sections.

export function sorted(xs) {
  return [...xs].filter((x) => Number.isFinite(x)).sort((a, b) => a - b)
}

/** The p-quantile (0..1) by nearest rank; NaN for an empty list. */
export function quantile(xs, p) {
  const s = sorted(xs)
  if (s.length === 0) return NaN
  return s[Math.min(s.length - 1, Math.max(0, Math.round((s.length - 1) * p)))]
}

export const median = (xs) => quantile(xs, 0.5)
export const p99 = (xs) => quantile(xs, 0.99)

/** A number with about three significant digits, thousands separated. */
export function fmt(x, digits) {
  if (x === undefined || x === null || Number.isNaN(x)) return 'n/a'
  if (!Number.isFinite(x)) return String(x)
  const a = Math.abs(x)
  const d = digits !== undefined ? digits : a >= 100 ? 0 : a >= 10 ? 1 : a >= 1 ? 2 : 3
  return x.toLocaleString('en-US', { minimumFractionDigits: d, maximumFractionDigits: d })
}

/** A ratio as "1.23×" (n/a when either side is missing). */
export function ratio(a, b) {
  if (!Number.isFinite(a) || !Number.isFinite(b) || b === 0) return 'n/a'
  return `${fmt(a / b, 2)}×`
}

/** Rotates `list` by `r` so each contender runs first in some round (interleaving). */
export function rotate(list, r) {
  const k = r % list.length
  return [...list.slice(k), ...list.slice(0, k)]
}

/** A markdown table from a header row and body rows (all strings). */
export function table(header, rows) {
  const widths = header.map((h, i) => Math.max(String(h).length, ...rows.map((r) => String(r[i]).length)))
  const line = (cells) => `| ${cells.map((c, i) => String(c).padEnd(widths[i])).join(' | ')} |`
  return [line(header), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...rows.map(line)].join('\n')
}
