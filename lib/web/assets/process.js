// A process page: the log over a WebSocket, live. The last cursor received is kept, so that a
// dropped connection resumes right after it (no gap, no repeat); the bytes of each stream are
// decoded as one UTF-8 stream, since a chunk may end inside a character.
'use strict'
;(() => {
  const { key, ref } = document.body.dataset
  const log = document.getElementById('log')
  const state = document.getElementById('state')
  const decoders = { stdout: new TextDecoder(), stderr: new TextDecoder() }
  let cursor
  let over = false
  let delay = 250

  function append(text, cls) {
    if (!text) return
    const last = log.lastChild
    const atBottom = window.innerHeight + window.scrollY >= document.body.scrollHeight - 4
    if (last && last.nodeType === 1 && last.className === cls) last.textContent += text
    else {
      const span = document.createElement('span')
      span.className = cls
      span.textContent = text
      log.appendChild(span)
    }
    if (atBottom) window.scrollTo(0, document.body.scrollHeight)
  }

  function bytes(base64) {
    const s = atob(base64)
    const b = new Uint8Array(s.length)
    for (let i = 0; i < s.length; i++) b[i] = s.charCodeAt(i)
    return b
  }

  function connect() {
    const since = cursor ? `?since=${encodeURIComponent(cursor)}` : ''
    const ws = new WebSocket(`ws://${location.host}/ws/logs/${encodeURIComponent(key)}/${encodeURIComponent(ref)}${since}`)
    ws.onopen = () => {
      delay = 250
      document.body.dataset.connected = 'true'
    }
    ws.onmessage = (e) => {
      const m = JSON.parse(e.data)
      if (m.cursor) cursor = m.cursor
      if (m.type === 'stdout' || m.type === 'stderr') append(decoders[m.type].decode(bytes(m.data), { stream: true }), m.type)
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
  connect()
})()
