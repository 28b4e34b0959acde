// A process page: the log over a WebSocket, live. The last cursor received is kept, so that a
// dropped connection resumes right after it (no gap, no repeat); the bytes of each stream are
// decoded as one UTF-8 stream, since a chunk may end inside a character.
//
// What is loaded is kept as lines ({ s: stream or 'marker', t: text }), so that a search and the
// stream filter run over text and never over the page's elements. Unfiltered, the log is a few
// long spans (one per run of a stream), cheap at any size; with a search only the matching lines
// are rendered, the first MAX_SHOWN of them, so that 100,000 lines stay responsive.
'use strict'
;(() => {
  const { key, ref } = document.body.dataset
  const $ = (id) => document.getElementById(id)
  const log = $('log')
  const state = $('state')
  const MAX_SHOWN = 2000
  const lines = []
  const decoders = { stdout: new TextDecoder(), stderr: new TextDecoder() }
  const opened = new URLSearchParams(location.search).get('since') || undefined
  let cursor = opened
  let over = false
  let delay = 250
  let stream = 'both'
  let query = null
  let pending = 0

  const shown = (s) => s === 'marker' || s === 'note' || stream === 'both' || stream === s

  /** Adds `text` of stream `s` to `into`: a line left open by the same stream goes on. */
  function addText(into, text, s) {
    const parts = text.split(/(?<=\n)/)
    let at = 0
    const last = into[into.length - 1]
    if (last && last.s === s && !last.t.endsWith('\n')) {
      last.t += parts[0]
      at = 1
    }
    for (; at < parts.length; at++) into.push({ s, t: parts[at] })
  }

  function spanOf(s, text) {
    const span = document.createElement('span')
    span.className = s === 'marker' ? 'marker' : s
    if (text) span.textContent = text
    return span
  }

  /** Appends to the unfiltered view: text nodes added to the last span of the same stream. */
  function appendPlain(text, s) {
    const last = log.lastChild
    if (last && last.nodeType === 1 && last.className === (s === 'marker' ? 'marker' : s)) last.appendChild(document.createTextNode(text))
    else log.appendChild(spanOf(s, text))
  }

  /** A line's text without its newline, so that a regex's `$` is the line's end. */
  const bare = (t) => (t.endsWith('\n') ? t.slice(0, -1) : t)

  function highlighted(line) {
    const span = spanOf(line.s)
    const text = bare(line.t)
    query.lastIndex = 0
    let at = 0
    for (let m; (m = query.exec(text)); ) {
      if (m[0] === '') {
        query.lastIndex++
        continue
      }
      span.append(text.slice(at, m.index))
      const mark = document.createElement('mark')
      mark.textContent = m[0]
      span.append(mark)
      at = m.index + m[0].length
    }
    span.append(line.t.slice(at))
    return span
  }

  function matches(line) {
    query.lastIndex = 0
    return query.test(bare(line.t))
  }

  function render() {
    pending = 0
    const out = document.createDocumentFragment()
    const found = $('found')
    if (!query) {
      let run = null
      let texts = []
      const flush = () => run !== null && out.append(spanOf(run, texts.join('')))
      for (const line of lines) {
        if (!shown(line.s)) continue
        if (line.s !== run) {
          flush()
          run = line.s
          texts = []
        }
        texts.push(line.t)
      }
      flush()
      if (!found.classList.contains('error')) found.textContent = ''
    } else {
      let n = 0
      for (const line of lines) {
        if (!shown(line.s) || !matches(line)) continue
        if (++n <= MAX_SHOWN) out.append(highlighted(line))
      }
      found.textContent = n === 1 ? '1 matching line' : `${n} matching lines` + (n > MAX_SHOWN ? `, the first ${MAX_SHOWN} shown` : '')
    }
    log.replaceChildren(out)
    scroll()
  }

  /** A search's results follow the log at most every 250 ms, not on every chunk. */
  function later() {
    if (!pending) pending = setTimeout(render, 250)
  }

  function scroll() {
    if ($('follow').checked) window.scrollTo(0, document.body.scrollHeight)
  }

  function append(text, s) {
    if (!text) return
    // A marker is a line of its own, even after output that ended without a newline.
    const last = lines[lines.length - 1]
    if (s === 'marker' && last && !last.t.endsWith('\n')) text = '\n' + text
    addText(lines, text, s)
    if (!shown(s)) return
    if (query) return later()
    appendPlain(text, s)
    scroll()
  }

  function marker(m) {
    const x = m.exit || {}
    const ended = x.signal ? `signal ${x.signal}` : x.code !== undefined && x.code !== null ? `exit ${x.code}` : 'ended'
    if (m.type === 'restart') return `── restarted (attempt ${m.attempt}, after ${ended}) ──\n`
    return `── probe ${m.probe}: ${m.ok ? 'ok' : 'failed'}${m.reason ? ` (${m.reason})` : ''} ──\n`
  }

  function bytes(base64) {
    const s = atob(base64)
    const b = new Uint8Array(s.length)
    for (let i = 0; i < s.length; i++) b[i] = s.charCodeAt(i)
    return b
  }

  const socketUrl = (params) => `ws://${location.host}/ws/logs/${encodeURIComponent(key)}/${encodeURIComponent(ref)}${params}`

  function connect() {
    const ws = new WebSocket(socketUrl(cursor ? `?since=${encodeURIComponent(cursor)}` : ''))
    ws.onopen = () => {
      delay = 250
      document.body.dataset.connected = 'true'
    }
    ws.onmessage = (e) => {
      const m = JSON.parse(e.data)
      if (m.cursor) cursor = m.cursor
      if (m.type === 'stdout' || m.type === 'stderr') append(decoders[m.type].decode(bytes(m.data), { stream: true }), m.type)
      else if (m.type === 'restart' || m.type === 'probe') append(marker(m), 'marker')
      else if (m.type === 'truncated') append('[older output was dropped from the bounded log]\n', 'note')
      else if (m.type === 'exit') {
        over = true
        const x = m.exit || {}
        state.textContent = x.signal ? `exited (signal ${x.signal})` : `exited ${x.code}`
      } else if (m.type === 'error') {
        over = true
        append(`[${m.message}]\n`, 'note')
      }
    }
    ws.onclose = () => {
      document.body.dataset.connected = 'false'
      if (over) return
      setTimeout(connect, delay)
      delay = Math.min(delay * 2, 5000)
    }
  }

  /** A page opened after a cursor: what came before it, up to that cursor, put ahead of the rest. */
  function loadOlder() {
    const button = $('older')
    button.disabled = true
    const older = []
    const own = { stdout: new TextDecoder(), stderr: new TextDecoder() }
    const ws = new WebSocket(socketUrl(`?until=${encodeURIComponent(opened)}`))
    ws.onmessage = (e) => {
      const m = JSON.parse(e.data)
      if (m.type === 'stdout' || m.type === 'stderr') addText(older, own[m.type].decode(bytes(m.data), { stream: true }), m.type)
      else if (m.type === 'restart' || m.type === 'probe') addText(older, marker(m), 'marker')
      else if (m.type === 'error') addText(older, `[${m.message}]\n`, 'note')
    }
    ws.onclose = () => {
      lines.unshift(...older)
      button.hidden = true
      document.body.dataset.older = 'loaded'
      render()
    }
  }

  function search() {
    const text = $('search').value
    const found = $('found')
    found.classList.remove('error')
    query = null
    const re = /^\/(.+)\/([a-z]*)$/.exec(text)
    try {
      if (re) query = new RegExp(re[1], re[2].includes('g') ? re[2] : re[2] + 'g')
      else if (text) query = new RegExp(text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'), 'gi')
    } catch (e) {
      found.classList.add('error')
      found.textContent = `invalid regular expression: ${e.message}`
    }
    clearTimeout(pending)
    render()
    log.dataset.query = text
  }

  function download() {
    const a = document.createElement('a')
    a.href = URL.createObjectURL(new Blob(lines.map((l) => l.t), { type: 'text/plain' }))
    a.download = `${String(ref).replace(/[^\w.-]+/g, '_')}.log`
    document.body.appendChild(a)
    a.click()
    a.remove()
    setTimeout(() => URL.revokeObjectURL(a.href), 1000)
  }

  let typing = 0
  $('search').addEventListener('input', () => {
    clearTimeout(typing)
    typing = setTimeout(search, 150)
  })
  $('stream').addEventListener('change', (e) => {
    stream = e.target.value
    render()
  })
  $('follow').addEventListener('change', scroll)
  // Scrolling up to read is a pause: the log goes on arriving, the page stays where it was put.
  const pause = () => ($('follow').checked = false)
  window.addEventListener('wheel', (e) => e.deltaY < 0 && pause(), { passive: true })
  window.addEventListener('keydown', (e) => ['PageUp', 'ArrowUp', 'Home'].includes(e.key) && e.target === document.body && pause())
  $('download').addEventListener('click', download)
  if (opened) {
    $('older').hidden = false
    $('older').addEventListener('click', loadOlder)
  }
  connect()
})()
