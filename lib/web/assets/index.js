// The index, live: one WebSocket (/ws/state) sends the groups and process rows that changed, and
// this script draws them in place, so a page left open stays true without reloads. Uptimes and
// lifetimes count down here between messages. The buttons POST to /api/ (controls.js); a kill,
// a stop, a destroy, a checkpoint's restore or deletion, and a capture over an existing
// checkpoint are asked about first in the page's <dialog>.
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
      section.querySelector('table.processes tbody').appendChild(tr)
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
      section.innerHTML =
        '<h2><span class="title"></span> <span class="group-actions"></span></h2><p class="detail"><span class="text"></span> <span class="expires"></span> <span class="totals"></span></p><p class="error" hidden></p><p class="empty">no processes</p><table class="processes" hidden><thead><tr><th>PID</th><th>NAME</th><th>STATE</th><th>RESTARTS</th><th>CPU</th><th>MEMORY</th><th>UPTIME</th><th>COMMAND</th><th></th></tr></thead><tbody></tbody></table>' +
        '<div class="checkpoints" hidden><h3>checkpoints <input type="text" class="checkpoint-name" placeholder="name (optional)" aria-label="checkpoint name" spellcheck="false" maxlength="255"> <button type="button" class="act" data-act="checkpoint-capture">Capture</button></h3><p class="error checkpoints-error" hidden></p><p class="empty checkpoints-empty">no checkpoints</p><table class="checkpoints" hidden><thead><tr><th>NAME</th><th>CREATED</th><th>FILES</th><th>SIZE</th><th>WRITTEN</th><th></th></tr></thead><tbody></tbody></table></div>'
      main.insertBefore(section, document.getElementById('none'))
    }
    drawCheckpoints(section, m)
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

  /** A sandbox's checkpoints, redrawn whole when its list changes (null: it has none to show). */
  function drawCheckpoints(section, m) {
    const box = section.querySelector('div.checkpoints')
    box.hidden = m.checkpoints === null
    const list = m.checkpoints ?? []
    const error = box.querySelector('.checkpoints-error')
    error.textContent = m.checkpointsError ?? ''
    error.hidden = !m.checkpointsError
    box.querySelector('.checkpoints-empty').hidden = list.length > 0
    box.querySelector('table.checkpoints').hidden = list.length === 0
    const rows = list.map((c) => {
      const tr = document.createElement('tr')
      tr.className = 'checkpoint'
      tr.dataset.name = c.name
      const td = (cls, text) => Object.assign(document.createElement('td'), { className: cls, textContent: text })
      const created = td('created', '')
      created.dataset.at = String(c.createdAt)
      created.title = new Date(c.createdAt).toISOString()
      const acts = td('actions', '')
      acts.append(button('checkpoint-restore', 'Restore'), button('checkpoint-delete', 'Delete'))
      tr.append(td('name', c.name), created, td('files', String(c.files)), td('size', c.size), td('written', c.written), acts)
      return tr
    })
    box.querySelector('table.checkpoints tbody').replaceChildren(...rows)
  }

  /** The empty-group notes and tables shown as the rows come and go. */
  function tidy() {
    const sections = document.querySelectorAll('section.group')
    for (const s of sections) {
      const n = s.querySelectorAll('table.processes tbody tr').length
      s.querySelector('table.processes').hidden = n === 0
      s.querySelector('.empty').hidden = n > 0 || !s.querySelector('.error').hidden
    }
    document.getElementById('none').hidden = sections.length > 0
  }

  function tickClocks() {
    const now = Date.now()
    for (const td of document.querySelectorAll('td.uptime')) td.textContent = td.dataset.started ? duration(now - Number(td.dataset.started)) : ''
    for (const td of document.querySelectorAll('td.created')) td.textContent = td.dataset.at ? `${duration(now - Number(td.dataset.at))} ago` : ''
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

  /** POSTs `body`; the answer's JSON when it was done, else null with the refusal shown. */
  async function post(path, body) {
    notice.textContent = ''
    notice.className = ''
    const res = await fetch(path, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) })
    const answer = await res.json().catch(() => ({}))
    if (res.ok) return answer
    notice.textContent = `refused: ${answer.error || res.status}`
    return null
  }

  /** Says what a checkpoint button did, until the next action. */
  function done(text) {
    notice.textContent = text
    notice.className = 'done'
  }

  /** A checkpoint button of sandbox `key`: capture (under the name typed, if any), restore, delete. */
  async function checkpointButton(b, key) {
    const path = `/api/g/${encodeURIComponent(key)}/checkpoint`
    const box = b.closest('div.checkpoints')
    if (b.dataset.act === 'checkpoint-capture') {
      const input = box.querySelector('.checkpoint-name')
      const name = input.value.trim()
      const exists = name !== '' && [...box.querySelectorAll('tr.checkpoint')].some((tr) => tr.dataset.name === name)
      if (exists && !(await confirmed(`Replace checkpoint ${name} of sandbox ${key} with the working directory as it is now?`, false))) return
      b.disabled = true
      try {
        const a = await post(path, { action: 'capture', name: name === '' ? undefined : name })
        if (a) {
          input.value = ''
          const left = a.result.skipped && a.result.skipped.length > 0 ? `; not in it: ${a.result.skipped.length} entries (${[...new Set(a.result.skipped.map((s) => s.kind))].join(', ')})` : ''
          done(`captured ${a.result.name}: ${a.result.files} files, ${a.result.written} written (${a.result.unchanged} files shared with the last capture)${left}`)
        }
      } finally {
        b.disabled = false
      }
      return
    }
    const name = b.closest('tr.checkpoint').dataset.name
    if (b.dataset.act === 'checkpoint-restore') {
      if (!(await confirmed(`Roll the working directory of sandbox ${key} back to checkpoint ${name}? What changed since is lost; running processes are left alone.`, false))) return
      const a = await post(path, { action: 'restore', name })
      if (a) done(`restored ${name}: ${a.result.files - a.result.unchanged} of ${a.result.files} files written back, ${a.result.removed} entries removed`)
    } else {
      if (!(await confirmed(`Delete checkpoint ${name} of sandbox ${key}? Other checkpoints keep the files they share with it.`, false))) return
      if (await post(path, { action: 'delete', name })) done(`deleted ${name}`)
    }
  }

  document.addEventListener('click', async (e) => {
    const b = e.target.closest('button.act')
    if (!b) return
    const enc = encodeURIComponent
    if (b.dataset.act.startsWith('checkpoint-')) return checkpointButton(b, b.closest('section.group').dataset.key)
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
