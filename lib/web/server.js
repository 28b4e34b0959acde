'use strict'
// lib/web/: the local web view (createWebView, `procvisor web`). This file is the HTTP server:
// the checks of every request (auth.js), the pages (pages.js), the assets, and the WebSockets of
// the log (log-socket.js), of terminals (terminal-socket.js) and of the index's live state
// (state-socket.js), and the index's buttons (controls.js). What it shows comes from a
// catalog (sources.js for an app's managers and sandboxes, lib/cli/web.js for this user's
// persistent sandboxes).

const fs = require('node:fs')
const http = require('node:http')
const path = require('node:path')
const { WebSocketServer } = require('ws')
const { Guard, newToken } = require('./auth')
const pages = require('./pages')
const { serveLog } = require('./log-socket')
const { serveTerminal } = require('./terminal-socket')
const { StateHub } = require('./state-socket')
const { handlePost } = require('./controls')

/**
 * The largest frame a terminal page sends: its page cuts a paste into pieces of 64 Ki UTF-16
 * units (192 KiB of UTF-8 at most), so 1 MiB leaves room for another client's typing and paste,
 * and a larger frame is closed with 1009 before it is buffered.
 */
const MAX_TERMINAL_FRAME = 1024 * 1024
/** A process page sends nothing on its log socket: anything larger than a control frame is refused. */
const MAX_LOG_FRAME = 1024

function packageFile(name, file) {
  return path.join(path.dirname(require.resolve(`${name}/package.json`)), file)
}

/** The assets by name: a fixed table, so no request names a file of its own. */
const ASSETS = {
  'style.css': [path.join(__dirname, 'assets', 'style.css'), 'text/css'],
  'process.js': [path.join(__dirname, 'assets', 'process.js'), 'text/javascript'],
  'index.js': [path.join(__dirname, 'assets', 'index.js'), 'text/javascript'],
  'terminal.js': [path.join(__dirname, 'assets', 'terminal.js'), 'text/javascript'],
  'xterm.js': [packageFile('@xterm/xterm', 'lib/xterm.js'), 'text/javascript'],
  'xterm.css': [packageFile('@xterm/xterm', 'css/xterm.css'), 'text/css'],
  'addon-attach.js': [packageFile('@xterm/addon-attach', 'lib/addon-attach.js'), 'text/javascript'],
  'addon-fit.js': [packageFile('@xterm/addon-fit', 'lib/addon-fit.js'), 'text/javascript'],
}

const SECURITY_HEADERS = {
  // No script but this server's files, no frame of it in another site's page, no Referer that
  // could carry the token, no guessing of types.
  'Content-Security-Policy': "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; connect-src 'self'; img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'; form-action 'none'",
  'X-Frame-Options': 'DENY',
  'Referrer-Policy': 'no-referrer',
  'X-Content-Type-Options': 'nosniff',
  'Cache-Control': 'no-store',
}

/** `/<kind>/<key>/<ref>` split, or null. */
function route(pathname, kinds) {
  const parts = pathname.split('/')
  if (parts.length !== 4 || parts[0] !== '' || !kinds.includes(parts[1])) return null
  try {
    return { kind: parts[1], key: decodeURIComponent(parts[2]), ref: decodeURIComponent(parts[3]) }
  } catch {
    return null
  }
}

function send(res, status, body, type = 'text/html; charset=utf-8', extra = {}) {
  res.writeHead(status, { ...SECURITY_HEADERS, 'Content-Type': type, 'Content-Length': Buffer.byteLength(body), ...extra })
  res.end(body)
}

/** A refused upgrade: the status line and nothing more, then the connection is closed. */
function refuseUpgrade(socket, status, text) {
  socket.end(`HTTP/1.1 ${status} ${text}\r\nConnection: close\r\nContent-Type: text/plain\r\nContent-Length: ${Buffer.byteLength(text)}\r\n\r\n${text}`)
}

/** Finds process `ref` (or the process of that name) of group `key` in the catalog's listing; null when there is none. */
/** A process a person may type into: a terminal of its group, or a process on a pty. */
const typeable = (p) => p.terminal === true || p.pty === true

async function findProcess(catalog, key, ref) {
  const group = (await catalog.list()).find((g) => g.key === key)
  const p = group && (group.processes.find((x) => x.ref === ref) ?? group.processes.find((x) => x.name === ref))
  return p ? { group, p } : null
}

/**
 * Serves `catalog` on `host`:`port` (0: a free port). Resolves with `{ url, port, token, close() }`
 * once listening; `url` holds the token.
 */
async function startServer({ catalog, port = 0, host = '127.0.0.1' }) {
  const token = newToken()
  let guard
  const sockets = new Set()
  const opened = new Set()

  const server = http.createServer((req, res) => {
    handle(req, res).catch((e) => {
      if (!res.headersSent) send(res, 500, pages.errorPage(500, e && e.message))
      else res.destroy()
    })
  })

  async function handle(req, res) {
    const url = new URL(req.url, 'http://localhost')
    const refusal = guard.refusal(req, url, false)
    if (refusal) return send(res, 403, pages.errorPage(403, refusal))
    if (req.method === 'POST' && url.pathname.startsWith('/api/')) return handlePost(req, res, url, { catalog, guard, headers: SECURITY_HEADERS })
    if (req.method !== 'GET' && req.method !== 'HEAD') return send(res, 405, pages.errorPage(405, 'only GET'), undefined, { Allow: 'GET, HEAD' })
    if (guard.tokenInUrl(url)) {
      // The token goes into the cookie and out of the URL (history, bookmarks, screenshots).
      url.searchParams.delete('token')
      res.writeHead(303, { ...SECURITY_HEADERS, Location: url.pathname + url.search, 'Set-Cookie': guard.setCookie(), 'Content-Length': 0 })
      return res.end()
    }
    if (url.pathname === '/') return send(res, 200, pages.indexPage(await catalog.list()))
    if (url.pathname.startsWith('/assets/')) {
      const asset = Object.hasOwn(ASSETS, url.pathname.slice(8)) ? ASSETS[url.pathname.slice(8)] : undefined
      if (!asset) return send(res, 404, pages.errorPage(404, 'no such file'))
      const body = await fs.promises.readFile(asset[0])
      res.writeHead(200, { ...SECURITY_HEADERS, 'Content-Type': `${asset[1]}; charset=utf-8`, 'Content-Length': body.length })
      return res.end(body)
    }
    const r = route(url.pathname, ['p', 't'])
    const found = r && (await findProcess(catalog, r.key, r.ref))
    if (!found) return send(res, 404, pages.errorPage(404, 'no such process (it may have been released, or its sandbox stopped)'))
    if (r.kind === 't' && !typeable(found.p)) return send(res, 404, pages.errorPage(404, 'this process is not on a terminal (start it with pty to type into it); its page shows its output'))
    if (r.kind === 'p') return send(res, 200, pages.processPage(found.group, found.p))
    // More terminals of the same group, in tabs beside the first.
    const tabs = url.searchParams.getAll('tab').map((ref) => found.group.processes.find((x) => x.ref === ref))
    if (tabs.some((x) => !x || !typeable(x))) return send(res, 404, pages.errorPage(404, 'no such terminal in this group'))
    return send(res, 200, pages.terminalPage(found.group, found.p, tabs))
  }

  const servers = {
    terminal: new WebSocketServer({ noServer: true, maxPayload: MAX_TERMINAL_FRAME }),
    logs: new WebSocketServer({ noServer: true, maxPayload: MAX_LOG_FRAME }),
    state: new WebSocketServer({ noServer: true, maxPayload: MAX_LOG_FRAME }),
  }
  const hub = new StateHub(catalog)
  // A socket's error (a malformed or oversized frame, a reset) ends that socket alone: `ws` has
  // already closed it with the code that says why, and unheard, the error would end this process.
  for (const wss of Object.values(servers)) wss.on('error', () => {})
  server.on('upgrade', (req, socket, head) => {
    socket.on('error', () => {})
    upgrade(req, socket, head).catch(() => refuseUpgrade(socket, 500, 'Internal Server Error'))
  })

  async function upgrade(req, socket, head) {
    const url = new URL(req.url, 'http://localhost')
    const refusal = guard.refusal(req, url, true)
    if (refusal) return refuseUpgrade(socket, 403, 'Forbidden')
    if (url.pathname === '/ws/state') {
      return servers.state.handleUpgrade(req, socket, head, (ws) => {
        ws.on('error', () => {})
        sockets.add(ws)
        ws.on('close', () => sockets.delete(ws))
        hub.add(ws)
      })
    }
    const r = route(url.pathname.replace(/^\/ws/, ''), ['logs', 'terminal'])
    if (!url.pathname.startsWith('/ws/') || !r) return refuseUpgrade(socket, 404, 'Not Found')
    // Keystrokes go only to a terminal, never to a plain program's stdin.
    if (r.kind === 'terminal') {
      const found = await findProcess(catalog, r.key, r.ref)
      if (!found || !typeable(found.p)) return refuseUpgrade(socket, 404, 'Not Found')
    }
    const o = await catalog.open(r.key, r.ref)
    if (!o) return refuseUpgrade(socket, 404, 'Not Found')
    if (socket.destroyed) return o.close()
    opened.add(o)
    servers[r.kind].handleUpgrade(req, socket, head, (ws) => {
      ws.on('error', () => {})
      sockets.add(ws)
      const since = url.searchParams.get('since') || undefined
      const until = url.searchParams.get('until') || undefined
      const served = r.kind === 'logs' ? serveLog(o.target, ws, { since, until }) : serveTerminal(o.target, ws, { since })
      const done = () => {
        if (!opened.delete(o)) return
        o.close()
      }
      ws.on('close', () => {
        sockets.delete(ws)
        done()
      })
      served.catch(() => {}).finally(() => {
        if (ws.readyState === ws.CLOSED) done()
      })
    })
  }

  await new Promise((resolve, reject) => {
    server.once('error', reject)
    server.listen(port, host, () => {
      server.removeListener('error', reject)
      resolve()
    })
  })
  const actual = server.address().port
  guard = new Guard({ host, port: actual, token })
  const urlHost = host === '::1' ? '[::1]' : ['0.0.0.0', '::', 'localhost'].includes(host) ? '127.0.0.1' : host.includes(':') ? `[${host}]` : host
  let closing
  return {
    url: `http://${urlHost}:${actual}/?token=${token}`,
    port: actual,
    token,
    close() {
      if (!closing) {
        closing = new Promise((resolve) => {
          hub.close()
          for (const ws of sockets) ws.terminate()
          for (const o of opened) o.close()
          opened.clear()
          for (const wss of Object.values(servers)) wss.close()
          server.close(() => resolve())
          server.closeAllConnections()
        })
      }
      return closing
    },
  }
}

module.exports = { startServer }
