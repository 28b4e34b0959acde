'use strict'
// The HTML of the web view. Every string from outside (commands, ids, directories, errors) goes
// through `escape`: a command can hold anything, `<script>` included. The pages run no inline
// script (the Content-Security-Policy forbids it); what they need to know is in data- attributes.

const { rowModel, groupModel } = require('./metrics')

const ESCAPES = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }

/** Text made safe for HTML, in an element or in a quoted attribute. */
function escape(value) {
  return String(value ?? '').replace(/[&<>"']/g, (c) => ESCAPES[c])
}

/** The path of a process page (`p`) or terminal page (`t`). */
function pagePath(kind, key, ref) {
  return `/${kind}/${encodeURIComponent(key)}/${encodeURIComponent(ref)}`
}

function layout(title, body, { scripts = [], styles = [], data = {} } = {}) {
  const attrs = Object.entries(data)
    .map(([k, v]) => ` data-${k}="${escape(v)}"`)
    .join('')
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escape(title)} · procvisor</title>
${[...styles, '/assets/style.css'].map((s) => `<link rel="stylesheet" href="${escape(s)}">`).join('\n')}
</head>
<body${attrs}>
${body}
${scripts.map((s) => `<script src="${escape(s)}"></script>`).join('\n')}
</body>
</html>
`
}

function exitText(p) {
  if (p.state !== 'exited') return ''
  return p.exitCode === undefined || p.exitCode === null ? 'exited' : `exited ${p.exitCode}`
}

/** Kill and Restart, as far as the process has them; the page asks before a kill. */
function actionButtons(r) {
  const kill = r.canKill ? '<button type="button" class="act" data-act="kill">Kill</button>' : ''
  const restart = r.canRestart ? '<button type="button" class="act" data-act="restart">Restart</button>' : ''
  return kill + restart
}

/** A row of the index; assets/index.js draws the same fields (metrics.js rowModel) when they change. */
function processRow(group, p) {
  const r = rowModel(group, p)
  const other = r.aside ? ` <a class="aside" href="${escape(r.aside.href)}">${escape(r.aside.text)}</a>` : ''
  return `<tr class="${escape(r.state)}" data-id="${escape(r.id)}" data-group="${escape(r.group)}" data-ref="${escape(r.ref)}">
<td class="pid">${escape(r.pid)}</td>
<td class="name">${escape(r.name)}</td>
<td class="state">${escape(r.word)}</td>
<td class="restarts">${escape(r.restarts ?? '')}</td>
<td class="cpu"><span class="num">${escape(r.cpu)}</span></td>
<td class="mem"><span class="num">${escape(r.mem)}</span></td>
<td class="uptime" data-started="${escape(r.startedAt ?? '')}"></td>
<td class="command"><a href="${escape(r.link)}">${escape(r.command)}</a>${other}</td>
<td class="actions">${actionButtons(r)}</td>
</tr>`
}

const HEAD = '<thead><tr><th>PID</th><th>NAME</th><th>STATE</th><th>RESTARTS</th><th>CPU</th><th>MEMORY</th><th>UPTIME</th><th>COMMAND</th><th></th></tr></thead>'

/** The confirmation the page asks before a kill, a stop or a destroy (with the signal for a kill). */
const CONFIRM = `<dialog id="confirm" aria-labelledby="confirm-text">
<p id="confirm-text"></p>
<label id="signal-choice">signal <select id="signal"><option>SIGTERM</option><option>SIGKILL</option><option>SIGINT</option><option>SIGHUP</option><option>SIGQUIT</option></select></label>
<p class="buttons"><button type="button" id="confirm-cancel">Cancel</button> <button type="button" id="confirm-ok">Confirm</button></p>
</dialog>
<p id="notice" role="status"></p>`

/** A checkpoint's row; assets/index.js draws the same when the list changes. */
function checkpointRow(c) {
  return `<tr class="checkpoint" data-name="${escape(c.name)}">
<td class="name">${escape(c.name)}</td>
<td class="created" data-at="${escape(c.createdAt)}" title="${escape(new Date(c.createdAt).toISOString())}"></td>
<td class="files">${escape(c.files)}</td>
<td class="size">${escape(c.size)}</td>
<td class="written">${escape(c.written)}</td>
<td class="actions"><button type="button" class="act" data-act="checkpoint-restore">Restore</button><button type="button" class="act" data-act="checkpoint-delete">Delete</button></td>
</tr>`
}

/** A sandbox's checkpoints: a name to capture under, and each checkpoint to restore or delete. */
function checkpointsBlock(m) {
  const list = m.checkpoints ?? []
  return `<div class="checkpoints"${m.checkpoints === null ? ' hidden' : ''}>
<h3>checkpoints <input type="text" class="checkpoint-name" placeholder="name (optional)" aria-label="checkpoint name" spellcheck="false" maxlength="255"> <button type="button" class="act" data-act="checkpoint-capture">Capture</button></h3>
<p class="error checkpoints-error"${m.checkpointsError ? '' : ' hidden'}>${escape(m.checkpointsError ?? '')}</p>
<p class="empty checkpoints-empty"${list.length === 0 ? '' : ' hidden'}>no checkpoints</p>
<table class="checkpoints"${list.length === 0 ? ' hidden' : ''}>
<thead><tr><th>NAME</th><th>CREATED</th><th>FILES</th><th>SIZE</th><th>WRITTEN</th><th></th></tr></thead>
<tbody>
${list.map(checkpointRow).join('\n')}
</tbody>
</table>
</div>`
}

/** The index: every group and its processes, each a link to a page of its own, kept live by assets/index.js. */
function indexPage(groups) {
  const sections = groups.map((g) => {
    const m = groupModel(g, [])
    const rows = g.processes.map((p) => processRow(g, p)).join('\n')
    const buttons = (m.canStop ? '<button type="button" class="act" data-act="stop">Stop</button>' : '') + (m.canDestroy ? '<button type="button" class="act" data-act="destroy">Destroy</button>' : '')
    return `<section class="group" data-key="${escape(g.key)}">
<h2>${escape(g.title)} <span class="group-actions">${buttons}</span></h2>
<p class="detail">${escape(m.detail)} <span class="expires" data-expires="${escape(m.expiresAt ?? '')}"></span> <span class="totals"></span></p>
<p class="error"${g.error ? '' : ' hidden'}>${escape(g.error ?? '')}</p>
<p class="empty"${!g.error && g.processes.length === 0 ? '' : ' hidden'}>no processes</p>
<table class="processes"${g.processes.length === 0 ? ' hidden' : ''}>
${HEAD}
<tbody>
${rows}
</tbody>
</table>
${checkpointsBlock(m)}
</section>`
  })
  const none = `<p class="empty" id="none"${groups.length === 0 ? '' : ' hidden'}>nothing to show: no sandbox is running</p>`
  return layout('processes', `<header><h1>procvisor</h1><a href="/">refresh</a> <span id="live" class="meta"></span></header>\n<main>\n${sections.join('\n')}${none}\n</main>\n${CONFIRM}`, { scripts: ['/assets/index.js'], data: { page: 'index' } })
}

/** A process's page: its log, live. */
function processPage(group, p) {
  const title = p.command || p.ref
  const terminal = p.state === 'running' && p.pty ? ` <a href="${escape(pagePath('t', group.key, p.ref))}">open as a terminal</a>` : ''
  const body = `<header><a href="/">procvisor</a> › ${escape(group.title)}</header>
<main>
<h1 class="command">${escape(title)}</h1>
<p class="meta">pid ${escape(p.pid)} · <span id="state">${escape(p.state === 'exited' ? exitText(p) : p.state)}</span>${terminal}</p>
<div class="tools">
<input id="search" type="search" placeholder="search: text or /regex/flags" aria-label="search the log" spellcheck="false">
<select id="stream" aria-label="streams"><option value="both">stdout + stderr</option><option value="stdout">stdout</option><option value="stderr">stderr</option></select>
<label><input id="follow" type="checkbox" checked> follow</label>
<button id="older" type="button" hidden>load older</button>
<button id="download" type="button">download .log</button>
<span id="found" class="meta"></span>
</div>
<pre id="log" aria-live="polite"></pre>
</main>`
  return layout(title, body, { scripts: ['/assets/process.js'], data: { key: group.key, ref: p.ref } })
}

/**
 * A terminal's page: xterm.js on the terminal's WebSocket. With `tabs` (more processes of the
 * group) the terminals are side by side in tabs, each its own xterm on its own socket; the other
 * terminals of the group are offered as tabs to add.
 */
function terminalPage(group, p, tabs = []) {
  const all = [p, ...tabs]
  const name = (x) => (x.terminal ? x.ref : x.command || x.ref)
  const title = all.map(name).join(' · ')
  const panes = all.map((x) => `<div class="pane" data-ref="${escape(x.ref)}"></div>`).join('')
  const bar = tabs.length === 0 ? '' : `<nav class="tabs" role="tablist">${all.map((x) => `<button type="button" role="tab" data-ref="${escape(x.ref)}"><span class="command">${escape(name(x))}</span> <span class="tab-state"></span></button>`).join('')}</nav>\n`
  const open = new Set(all.map((x) => x.ref))
  const more = group.processes
    .filter((x) => !open.has(x.ref) && x.state === 'running' && (x.terminal === true || x.pty === true))
    .map((x) => {
      const href = pagePath('t', group.key, p.ref) + '?' + [...tabs, x].map((t) => `tab=${encodeURIComponent(t.ref)}`).join('&')
      return ` <a class="aside add-tab" href="${escape(href)}">+ ${escape(name(x))}</a>`
    })
    .join('')
  const body = `<header class="bar"><a href="/">procvisor</a> › ${escape(group.title)} › <span class="command">${escape(tabs.length ? `${all.length} terminals` : title)}</span> <span id="state"></span>${more}</header>
${bar}<div id="terminal">${panes}</div>`
  return layout(title, body, {
    styles: ['/assets/xterm.css'],
    scripts: ['/assets/xterm.js', '/assets/addon-attach.js', '/assets/addon-fit.js', '/assets/terminal.js'],
    data: { key: group.key, ref: p.ref, refs: JSON.stringify(all.map((x) => x.ref)), page: 'terminal' },
  })
}

function errorPage(status, message) {
  return layout(String(status), `<header><a href="/">procvisor</a></header>\n<main><h1>${escape(status)}</h1><p>${escape(message)}</p></main>`)
}

module.exports = { escape, indexPage, processPage, terminalPage, errorPage, pagePath }
