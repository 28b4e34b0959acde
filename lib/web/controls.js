'use strict'
// The index's buttons: POST /api/p/<group>/<ref>/kill|restart, POST /api/g/<group>/stop|destroy
// and POST /api/g/<group>/checkpoint (`{ "action": "capture" | "restore" | "delete", "name": … }`),
// each a JSON body (`{ "signal": "SIGTERM" }` for a kill). server.js has already asked for the
// token and for a request of this server's own pages; a change is asked for more: a POST must
// prove it came from a page of this server (its Origin, or Sec-Fetch-Site: same-origin), and carry
// the token in the cookie only, since a token in a URL is one a person may have pasted elsewhere.

const { request } = require('./checkpoints')
const { bytesText } = require('./metrics')

const SIGNALS = new Set(['SIGTERM', 'SIGKILL', 'SIGINT', 'SIGHUP', 'SIGQUIT', 'SIGUSR1', 'SIGUSR2', 'SIGSTOP', 'SIGCONT'])
const MAX_BODY = 1024

function json(res, status, value, headers) {
  const body = JSON.stringify(value)
  res.writeHead(status, { ...headers, 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': Buffer.byteLength(body) })
  res.end(body)
}

function readBody(req) {
  return new Promise((resolve, reject) => {
    let body = ''
    req.setEncoding('utf8')
    req.on('data', (d) => {
      body += d
      if (body.length > MAX_BODY) {
        reject(Object.assign(new Error('the body is too large'), { status: 413 }))
        req.destroy()
      }
    })
    req.on('end', () => resolve(body))
    req.on('error', reject)
  })
}

/** Why a POST is refused beyond server.js's checks, or null. */
function postRefusal(req, url, guard) {
  if (url.searchParams.has('token')) return 'a change needs the token in the cookie, not in the URL'
  const site = req.headers['sec-fetch-site']
  if (!(guard.originAllowed(req) || (req.headers.origin === undefined && site === 'same-origin'))) return "a change may be asked only by this server's own pages (Origin or Sec-Fetch-Site)"
  return null
}

/** `/api/p/<key>/<ref>/<action>` or `/api/g/<key>/<action>` split, or null. */
function parse(pathname) {
  const parts = pathname.split('/')
  try {
    if (parts.length === 6 && parts[2] === 'p' && ['kill', 'restart'].includes(parts[5])) return { key: decodeURIComponent(parts[3]), ref: decodeURIComponent(parts[4]), action: parts[5] }
    if (parts.length === 5 && parts[2] === 'g' && ['stop', 'destroy', 'checkpoint'].includes(parts[4])) return { key: decodeURIComponent(parts[3]), action: parts[4] }
  } catch {
    return null
  }
  return null
}

/** Serves a POST under /api/ for `catalog`; `headers` are the server's security headers. */
async function handlePost(req, res, url, { catalog, guard, headers }) {
  const refusal = postRefusal(req, url, guard)
  if (refusal) return json(res, 403, { error: refusal }, headers)
  const r = parse(url.pathname)
  if (!r) return json(res, 404, { error: 'no such action' }, headers)
  let body = {}
  try {
    const text = await readBody(req)
    if (text !== '') body = JSON.parse(text)
  } catch (e) {
    return json(res, e.status ?? 400, { error: e.status ? e.message : 'the body is not JSON' }, headers)
  }
  if (r.action === 'checkpoint') return checkpointPost(res, r.key, body, { catalog, headers })
  const signal = body && body.signal !== undefined ? body.signal : 'SIGTERM'
  if (r.action === 'kill' && !SIGNALS.has(signal)) return json(res, 400, { error: `no such signal: ${String(signal)}` }, headers)
  try {
    const done = r.ref === undefined ? await catalog.groupAction(r.key, r.action) : await catalog.processAction(r.key, r.ref, r.action, signal)
    if (!done) return json(res, 404, { error: r.ref === undefined ? 'no such sandbox, or it cannot be stopped from here' : 'no such process' }, headers)
    return json(res, 200, { ok: true }, headers)
  } catch (e) {
    return json(res, 409, { error: e && e.message ? e.message : String(e) }, headers)
  }
}

/** A checkpoint button: `{ action: 'capture' | 'restore' | 'delete', name? }`; answers with what it did. */
async function checkpointPost(res, key, body, { catalog, headers }) {
  const asked = request(body)
  if (asked.refused) return json(res, 400, { error: asked.refused }, headers)
  if (typeof catalog.checkpointAction !== 'function') return json(res, 404, { error: 'no checkpoints here' }, headers)
  try {
    const done = await catalog.checkpointAction(key, asked.action, asked.name)
    if (!done) return json(res, 404, { error: 'no such sandbox' }, headers)
    const { name, files, bytes, newBytes, unchanged, removed, skipped } = done
    const written = typeof newBytes === 'number' ? bytesText(newBytes) : undefined
    return json(res, 200, { ok: true, result: { name: name ?? asked.name, files, bytes, newBytes, written, unchanged, removed, skipped } }, headers)
  } catch (e) {
    // A bad name, an unknown checkpoint, a full disk: the typed error's sentence, for the page to show.
    return json(res, e && e.osCode === 'ENOENT' ? 404 : 409, { error: e && e.message ? e.message : String(e), code: e && e.code }, headers)
  }
}

module.exports = { handlePost }
