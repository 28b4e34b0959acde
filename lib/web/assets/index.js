// The index, live: one WebSocket (/ws/state) sends the groups and process rows that changed, and
// this script draws them in place, so a page left open stays true without reloads. Uptimes and
// lifetimes count down here between messages. The buttons POST to /api/ (controls.js); a kill,
// a stop and a destroy are asked about first in the page's <dialog>.
'use strict'
;(() => {
  const main = document.querySelector('main')
  const live = document.getElementById('live')
  const notice = document.getElementById('notice')
  const SVG = 'http://www.w3.org/2000/svg'
  let delay = 250

  const cell = (tr, cls) => tr.querySelector(`td.${cls}`)
  const groupOf = (key) => [...document.querySelectorAll('section.group')].find((s) => s.dataset.key === key)
  const rowOf = (id) => [...document.querySelectorAll('tr[data-id]')].find((r) => r.dataset.id === id)

  function duration(ms) {
    const s = Math.max(0, Math.floor(ms / 1000))
    if (s < 60) return `${s}s`
    if (s < 3600) return `${Math.floor(s / 60)}m ${s % 60}s`
    if (s < 86400) return `${Math.floor(s / 3600)}h ${Math.floor((s % 3600) / 60)}m`
    return `${Math.floor(s / 86400)}d ${Math.floor((s % 86400) / 3600)}h`
  }

  /** A sparkline of `points`, scaled to `top` (at least the largest point). */
  function spark(points, top) {
    const svg = document.createElementNS(SVG, 'svg')
    svg.setAttribute('class', 'spark')
    svg.setAttribute('viewBox', '0 0 60 16')
    svg.setAttribute('aria-hidden', 'true')
    if (points.length > 1) {
      const max = Math.max(top, ...points) || 1
      const line = document.createElementNS(SVG, 'polyline')
      line.setAttribute('points', points.map((v, i) => `${((i * 60) / (points.length - 1)).toFixed(1)},${(15 - (v / max) * 14).toFixed(1)}`).join(' '))
      svg.appendChild(line)
    }
    return svg
  }

  function button(act, text) {
    const b = document.createElement('button')
    b.type = 'button'
    b.className = 'act'
    b.dataset.act = act
    b.textContent = text
    return b
  }

  function drawRow(m) {
    let tr = rowOf(m.id)
    const section = groupOf(m.group)
    if (!section) return
    if (!tr) {
      tr = document.createElement('tr')
      for (const cls of ['pid', 'name', 'state', 'restarts', 'cpu', 'mem', 'uptime', 'command', 'actions']) {
        const td = document.createElement('td')
        td.className = cls
        tr.appendChild(td)
      }
      section.querySelector('tbody').appendChild(tr)
    }
    tr.className = m.state
    tr.dataset.id = m.id
    tr.dataset.group = m.group
    tr.dataset.ref = m.ref
    cell(tr, 'pid').textContent = m.pid
    cell(tr, 'name').textContent = m.name
    cell(tr, 'state').textContent = m.word
    cell(tr, 'restarts').textContent = m.restarts ?? ''
    cell(tr, 'cpu').replaceChildren(Object.assign(document.createElement('span'), { className: 'num', textContent: m.cpu }), spark(m.cpuHistory, 100))
    cell(tr, 'mem').replaceChildren(Object.assign(document.createElement('span'), { className: 'num', textContent: m.mem }), spark(m.memHistory, 0))
    cell(tr, 'uptime').dataset.started = m.startedAt ?? ''
    const link = Object.assign(document.createElement('a'), { href: m.link, textContent: m.command })
    const parts = [link]
    if (m.aside) parts.push(' ', Object.assign(document.createElement('a'), { className: 'aside', href: m.aside.href, textContent: m.aside.text }))
    cell(tr, 'command').replaceChildren(...parts)
    const acts = []
    if (m.canKill) acts.push(button('kill', 'Kill'))
    if (m.canRestart) acts.push(button('restart', 'Restart'))
    cell(tr, 'actions').replaceChildren(...acts)
  }

  function drawGroup(m) {
    let section = groupOf(m.key)
    if (!section) {
      section = document.createElement('section')
      section.className = 'group'
      section.dataset.key = m.key
      section.innerHTML = '<h2><span class="title"></span> <span class="group-actions"></span></h2><p class="detail"><span class="text"></span> <span class="expires"></span> <span class="totals"></span></p><p class="error" hidden></p><p class="empty">no processes</p><table hidden><thead><tr><th>PID</th><th>NAME</th><th>STATE</th><th>RESTARTS</th><th>CPU</th><th>MEMORY</th><th>UPTIME</th><th>COMMAND</th><th></th></tr></thead><tbody></tbody></table>'
      main.insertBefore(section, document.getElementById('none'))
    }
    const h2 = section.querySelector('h2')
    const actions = section.querySelector('.group-actions')
    h2.replaceChildren(m.title, ' ', actions)
    const detail = section.querySelector('.detail')
    detail.replaceChildren(m.detail, ' ', detail.querySelector('.expires'), ' ', detail.querySelector('.totals'))
    detail.querySelector('.expires').dataset.expires = m.expiresAt ?? ''
    detail.querySelector('.totals').textContent = m.totals
    const error = section.querySelector('.error')
    error.textContent = m.error ?? ''
    error.hidden = !m.error
    const acts = []
    if (m.canStop) acts.push(button('stop', 'Stop'))
    if (m.canDestroy) acts.push(button('destroy', 'Destroy'))
    actions.replaceChildren(...acts)
  }

  /** The empty-group notes and tables shown as the rows come and go. */
  function tidy() {
    const sections = document.querySelectorAll('section.group')
    for (const s of sections) {
      const n = s.querySelectorAll('tbody tr').length
      s.querySelector('table').hidden = n === 0
      s.querySelector('.empty').hidden = n > 0 || !s.querySelector('.error').hidden
    }
    document.getElementById('none').hidden = sections.length > 0
  }

  function tickClocks() {
    const now = Date.now()
    for (const td of document.querySelectorAll('td.uptime')) td.textContent = td.dataset.started ? duration(now - Number(td.dataset.started)) : ''
    for (const e of document.querySelectorAll('.expires')) {
      const at = Number(e.dataset.expires)
      e.textContent = e.dataset.expires === '' ? '' : at > now ? `· expires in ${duration(at - now)}` : '· expiring'
    }
  }

  function apply(m) {
    for (const g of m.groups.set) drawGroup(g)
    for (const r of m.rows.set) drawRow(r)
    for (const id of m.rows.drop) rowOf(id)?.remove()
    for (const key of m.groups.drop) groupOf(key)?.remove()
    tidy()
    tickClocks()
  }

  function connect() {
    const ws = new WebSocket(`ws://${location.host}/ws/state`)
    ws.onopen = () => {
      delay = 250
      document.body.dataset.connected = 'true'
      live.textContent = 'live'
    }
    ws.onmessage = (e) => {
      const m = JSON.parse(e.data)
      if (m.type === 'state') apply(m)
    }
    ws.onclose = () => {
      document.body.dataset.connected = 'false'
      live.textContent = 'reconnecting…'
      setTimeout(connect, delay)
      delay = Math.min(delay * 2, 5000)
    }
  }

  /** Resolves with the signal chosen (or true), or null when the person cancels. */
  function confirmed(text, withSignal) {
    const dialog = document.getElementById('confirm')
    document.getElementById('confirm-text').textContent = text
    document.getElementById('signal-choice').hidden = !withSignal
    return new Promise((resolve) => {
      const ok = document.getElementById('confirm-ok')
      const cancel = document.getElementById('confirm-cancel')
      const done = (value) => {
        ok.onclick = cancel.onclick = dialog.onclose = null
        if (dialog.open) dialog.close()
        resolve(value)
      }
      ok.onclick = () => done(withSignal ? document.getElementById('signal').value : true)
      cancel.onclick = () => done(null)
      dialog.onclose = () => done(null)
      dialog.showModal()
    })
  }

  async function post(path, body) {
    notice.textContent = ''
    const res = await fetch(path, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) })
    if (!res.ok) notice.textContent = `refused: ${(await res.json().catch(() => ({}))).error || res.status}`
  }

  document.addEventListener('click', async (e) => {
    const b = e.target.closest('button.act')
    if (!b) return
    const enc = encodeURIComponent
    const tr = b.closest('tr')
    if (tr) {
      const what = `process ${cell(tr, 'pid').textContent} (${cell(tr, 'command').textContent.trim()})`
      if (b.dataset.act === 'kill') {
        const signal = await confirmed(`Kill ${what}?`, true)
        if (signal) await post(`/api/p/${enc(tr.dataset.group)}/${enc(tr.dataset.ref)}/kill`, { signal })
      } else await post(`/api/p/${enc(tr.dataset.group)}/${enc(tr.dataset.ref)}/restart`, {})
      return
    }
    const key = b.closest('section.group').dataset.key
    const verb = b.dataset.act === 'stop' ? 'Stop' : 'Destroy'
    const what = b.dataset.act === 'stop' ? 'its processes end' : 'its processes end and its configuration and checkpoints are deleted'
    if (await confirmed(`${verb} sandbox ${key}? ${what}.`, false)) await post(`/api/g/${enc(key)}/${b.dataset.act}`, {})
  })

  setInterval(tickClocks, 1000)
  tickClocks()
  connect()
})()
