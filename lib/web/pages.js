'use strict'
// The HTML of the web view. Every string from outside (commands, ids, directories, errors) goes
// through `escape`: a command can hold anything, `<script>` included. The pages run no inline
// script (the Content-Security-Policy forbids it); what they need to know is in data- attributes.

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

function processRow(group, p) {
  const state = p.state === 'exited' ? exitText(p) : p.state
  const link = p.terminal ? pagePath('t', group.key, p.ref) : pagePath('p', group.key, p.ref)
  const other = p.terminal ? `<a class="aside" href="${escape(pagePath('p', group.key, p.ref))}">log</a>` : p.state === 'running' && p.pty ? `<a class="aside" href="${escape(pagePath('t', group.key, p.ref))}">terminal</a>` : ''
  return `<tr class="${escape(p.state)}">
<td class="pid">${escape(p.pid)}</td>
<td class="name">${escape(p.name ?? '')}</td>
<td class="state">${escape(state)}</td>
<td class="command"><a href="${escape(link)}">${escape(p.command || p.ref)}</a> ${other}</td>
</tr>`
}

/** The index: every group and its processes, each a link to a page of its own. */
function indexPage(groups) {
  const sections = groups.map((g) => {
    const rows = g.processes.map((p) => processRow(g, p)).join('\n')
    const body = g.error ? `<p class="error">${escape(g.error)}</p>` : g.processes.length === 0 ? '<p class="empty">no processes</p>' : `<table>\n<thead><tr><th>PID</th><th>NAME</th><th>STATE</th><th>COMMAND</th></tr></thead>\n<tbody>\n${rows}\n</tbody>\n</table>`
    return `<section class="group" data-key="${escape(g.key)}">
<h2>${escape(g.title)}</h2>
<p class="detail">${escape(g.detail)}</p>
${body}
</section>`
  })
  const none = groups.length === 0 ? '<p class="empty">nothing to show: no sandbox is running</p>' : ''
  return layout('processes', `<header><h1>procvisor</h1><a href="/">refresh</a></header>\n<main>\n${sections.join('\n')}${none}\n</main>`)
}

/** A process's page: its log, live. */
function processPage(group, p) {
  const title = p.command || p.ref
  const terminal = p.state === 'running' && p.pty ? ` <a href="${escape(pagePath('t', group.key, p.ref))}">open as a terminal</a>` : ''
  const body = `<header><a href="/">procvisor</a> › ${escape(group.title)}</header>
<main>
<h1 class="command">${escape(title)}</h1>
<p class="meta">pid ${escape(p.pid)} · <span id="state">${escape(p.state === 'exited' ? exitText(p) : p.state)}</span>${terminal}</p>
<pre id="log" aria-live="polite"></pre>
</main>`
  return layout(title, body, { scripts: ['/assets/process.js'], data: { key: group.key, ref: p.ref } })
}

/** A terminal's page: xterm.js on the terminal's WebSocket. */
function terminalPage(group, p) {
  const title = p.terminal ? p.ref : p.command || p.ref
  const body = `<header class="bar"><a href="/">procvisor</a> › ${escape(group.title)} › <span class="command">${escape(title)}</span> <span id="state"></span></header>
<div id="terminal"></div>`
  return layout(title, body, {
    styles: ['/assets/xterm.css'],
    scripts: ['/assets/xterm.js', '/assets/addon-attach.js', '/assets/addon-fit.js', '/assets/terminal.js'],
    data: { key: group.key, ref: p.ref, page: 'terminal' },
  })
}

function errorPage(status, message) {
  return layout(String(status), `<header><a href="/">procvisor</a></header>\n<main><h1>${escape(status)}</h1><p>${escape(message)}</p></main>`)
}

module.exports = { escape, indexPage, processPage, terminalPage, errorPage, pagePath }
