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

module.exports = { table, when, waitWritable }
