'use strict'
// How the command line prints: aligned tables, short times, and writes that wait for a slow reader.

/** Rows under a header, each column as wide as its widest cell; the last column is not padded. */
function table(header, rows) {
  const all = [header, ...rows]
  const widths = header.map((_, i) => Math.max(...all.map((r) => r[i].length)))
  return all.map((r) => r.map((cell, i) => (i === r.length - 1 ? cell : cell.padEnd(widths[i]))).join('  ')).join('\n') + '\n'
}

/** An ISO time as `YYYY-MM-DD HH:MM:SS` in local time, or '-'. */
function when(iso) {
  if (!iso) return '-'
  const d = new Date(iso)
  const p = (n) => String(n).padStart(2, '0')
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())} ${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}`
}

/** A span of time as a person reads it: `42s`, `5m07s`, `3h12m`, `2d4h`; '-' for none. */
function duration(ms) {
  if (ms === undefined) return '-'
  const s = Math.floor(ms / 1000)
  const p = (n) => String(n).padStart(2, '0')
  if (s < 60) return `${s}s`
  if (s < 3600) return `${Math.floor(s / 60)}m${p(s % 60)}s`
  if (s < 86400) return `${Math.floor(s / 3600)}h${p(Math.floor(s / 60) % 60)}m`
  return `${Math.floor(s / 86400)}d${Math.floor(s / 3600) % 24}h`
}

/** A size in bytes in binary units: `512B`, `3.2MiB`; '-' for none. */
function size(bytes) {
  if (bytes === undefined) return '-'
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB']
  let i = 0
  while (bytes >= 1024 && i < units.length - 1) [bytes, i] = [bytes / 1024, i + 1]
  return i === 0 ? `${bytes}B` : `${bytes.toFixed(1)}${units[i]}`
}

/** Writes `data`, waiting for 'drain' when the reader is behind, so memory stays bounded. */
function waitWritable(stream, data) {
  if (stream.write(data)) return Promise.resolve()
  return new Promise((resolve, reject) => {
    const onError = (e) => {
      stream.removeListener('drain', onDrain)
      reject(e)
    }
    const onDrain = () => {
      stream.removeListener('error', onError)
      resolve()
    }
    stream.once('drain', onDrain)
    stream.once('error', onError)
  })
}

module.exports = { table, when, duration, size, waitWritable }
