// A terminal page: xterm.js (its default DOM renderer, so the screen's text is in the page) on
// the terminal's WebSocket through the attach addon. Sizes follow the page (fit addon) and are
// sent as "\u0000" + JSON { cols, rows }. The server also sends "\u0000" + JSON control frames
// (the cursor after each output frame, the exit), which are kept from the attach addon. After a
// dropped connection the page reconnects by itself with `since` the last cursor: the screen it
// has is the program's, and the output goes on from the next byte. A page of several terminals
// shows them in tabs, each its own xterm on its own socket, so that each keeps its own screen.
'use strict'
;(() => {
  const { key } = document.body.dataset
  const refs = JSON.parse(document.body.dataset.refs)
  window.procvisorTerminals = {}

  /**
   * The server takes frames of 1 MiB at most, and the attach addon sends a paste as one: cut in
   * pieces of 64 Ki UTF-16 units (192 KiB of UTF-8 at most), never inside a surrogate pair.
   */
  const PIECE = 65536
  function sendInPieces(ws, data) {
    if (typeof data !== 'string') {
      const bytes = data instanceof ArrayBuffer ? new Uint8Array(data) : new Uint8Array(data.buffer, data.byteOffset, data.byteLength)
      let at = 0
      do {
        ws.send(bytes.subarray(at, at + PIECE))
        at += PIECE
      } while (at < bytes.length)
      return
    }
    let at = 0
    do {
      let end = Math.min(at + PIECE, data.length)
      const last = data.charCodeAt(end - 1)
      if (end < data.length && last >= 0xd800 && last <= 0xdbff) end--
      ws.send(data.slice(at, end))
      at = end
    } while (at < data.length)
  }

  /** The socket as the attach addon sees it: the output frames only. */
  function outputOnly(ws) {
    const view = new EventTarget()
    Object.defineProperties(view, {
      readyState: { get: () => ws.readyState },
      binaryType: { get: () => ws.binaryType, set: (v) => (ws.binaryType = v) },
    })
    view.send = (data) => sendInPieces(ws, data)
    ws.addEventListener('message', (e) => {
      if (typeof e.data !== 'string') view.dispatchEvent(new MessageEvent('message', { data: e.data }))
    })
    ws.addEventListener('close', () => view.dispatchEvent(new Event('close')))
    ws.addEventListener('error', () => view.dispatchEvent(new Event('error')))
    return view
  }

  /** A terminal in `pane` on the socket of `ref`; `state` shows how it ended. */
  function mount(pane, ref, state) {
    const term = new Terminal({ scrollback: 5000, fontFamily: 'ui-monospace, SFMono-Regular, Menlo, monospace', fontSize: 13 })
    const fit = new FitAddon.FitAddon()
    term.loadAddon(fit)
    term.open(pane)
    let cursor
    let over = false
    let socket
    let delay = 250
    window.procvisorTerminals[ref] = term

    function sendSize() {
      if (socket && socket.readyState === WebSocket.OPEN) socket.send('\u0000' + JSON.stringify({ cols: term.cols, rows: term.rows }))
    }
    term.onResize(sendSize)
    // A hidden tab has no size: it is fitted when it is shown, which this observer sees too.
    new ResizeObserver(() => pane.offsetParent && fit.fit()).observe(pane)

    function control(text) {
      const m = JSON.parse(text.slice(1))
      if (m.cursor) cursor = m.cursor
      if (m.exit) {
        over = true
        state.textContent = m.exit.signal ? `(exited, signal ${m.exit.signal})` : `(exited ${m.exit.code})`
        pane.dataset.exited = 'true'
        if (refs.length === 1) document.body.dataset.exited = 'true'
      }
    }

    function connect() {
      const since = cursor ? `&since=${encodeURIComponent(cursor)}` : ''
      const ws = new WebSocket(`ws://${location.host}/ws/terminal/${encodeURIComponent(key)}/${encodeURIComponent(ref)}?cursors=1${since}`)
      ws.binaryType = 'arraybuffer'
      socket = ws
      let attach
      ws.addEventListener('message', (e) => {
        if (typeof e.data === 'string' && e.data[0] === '\u0000') control(e.data)
      })
      ws.addEventListener('open', () => {
        delay = 250
        attach = new AttachAddon.AttachAddon(outputOnly(ws))
        term.loadAddon(attach)
        sendSize()
        pane.dataset.connected = 'true'
        if (refs.length === 1) document.body.dataset.connected = 'true'
      })
      ws.addEventListener('close', () => {
        pane.dataset.connected = 'false'
        if (refs.length === 1) document.body.dataset.connected = 'false'
        if (attach) attach.dispose()
        if (over) return
        setTimeout(connect, delay)
        delay = Math.min(delay * 2, 5000)
      })
    }
    connect()
    return { term, fit }
  }

  const panes = [...document.querySelectorAll('#terminal > .pane')]
  const tabs = [...document.querySelectorAll('.tabs button')]
  const mounted = refs.map((ref, i) => mount(panes[i], ref, tabs.length ? tabs[i].querySelector('.tab-state') : document.getElementById('state')))

  function show(i) {
    panes.forEach((p, n) => (p.hidden = n !== i))
    tabs.forEach((t, n) => t.setAttribute('aria-selected', String(n === i)))
    window.procvisorTerminal = mounted[i].term
    mounted[i].fit.fit()
    mounted[i].term.focus()
  }
  tabs.forEach((t, i) => t.addEventListener('click', () => show(i)))
  show(0)
})()
