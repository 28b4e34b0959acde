'use strict'
// Who may use the web view. It can type into terminals, so it must be as private as a shell:
// - a random token, given once in the URL, then kept in an HttpOnly SameSite=Strict cookie, is
//   asked of every request and every WebSocket (another local user, or a page of another site
//   the browser has open, does not know it);
// - the Host header must name this server by its loopback address: a page of another site whose
//   name was made to resolve to 127.0.0.1 (DNS rebinding) sends its own name there;
// - a WebSocket's Origin must be this server's own: browsers let any page open a WebSocket to
//   any address, and only the Origin says which page it was;
// - a plain request that says it came from another page (a foreign Origin, or Sec-Fetch-Site
//   other than same-origin or none) is refused too: a page of another site, or of another port
//   of this host (same-site, and so sent the SameSite cookie), must not make the browser fetch
//   or navigate here with the token.

const crypto = require('node:crypto')

/** A fresh token: 32 random bytes, URL-safe. */
function newToken() {
  return crypto.randomBytes(32).toString('base64url')
}

function sameSecret(given, token) {
  if (typeof given !== 'string') return false
  const a = Buffer.from(given)
  const b = Buffer.from(token)
  return a.length === b.length && crypto.timingSafeEqual(a, b)
}

/** The value of cookie `name` in a Cookie header, or undefined. */
function cookie(header, name) {
  if (typeof header !== 'string') return undefined
  for (const part of header.split(';')) {
    const at = part.indexOf('=')
    if (at > 0 && part.slice(0, at).trim() === name) return part.slice(at + 1).trim()
  }
  return undefined
}

/**
 * The checks of one server: `port` it listens on, `host` it was asked to listen on, `token`.
 * `cookieName` holds the port, since a browser shares cookies between the ports of one host.
 */
class Guard {
  constructor({ host, port, token }) {
    this.token = token
    this.cookieName = `procvisor_web_${port}`
    this.hosts = new Set([`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`])
    // Listening on a name or address of its own: that one is how the browser reaches it.
    if (host && !['0.0.0.0', '::', '127.0.0.1', 'localhost', '::1'].includes(host)) this.hosts.add(`${host.includes(':') ? `[${host}]` : host}:${port}`)
  }

  /** Whether the Host header names this server. */
  hostAllowed(req) {
    const host = req.headers.host
    return typeof host === 'string' && this.hosts.has(host.toLowerCase())
  }

  /** Whether the request carries the token, in its URL or in the cookie. */
  tokenGiven(req, url) {
    return sameSecret(url.searchParams.get('token'), this.token) || sameSecret(cookie(req.headers.cookie, this.cookieName), this.token)
  }

  /** Whether the token came in the URL (then the response sets the cookie and drops it from the URL). */
  tokenInUrl(url) {
    return sameSecret(url.searchParams.get('token'), this.token)
  }

  setCookie() {
    return `${this.cookieName}=${this.token}; HttpOnly; SameSite=Strict; Path=/`
  }

  /** Whether a WebSocket's Origin is this server's own (the Host header already checked). */
  originAllowed(req) {
    const origin = req.headers.origin
    return typeof origin === 'string' && origin.toLowerCase() === `http://${String(req.headers.host).toLowerCase()}`
  }

  /**
   * Whether a plain request came from this server's own pages or from the user (typed, a
   * bookmark): an Origin, when sent, is this server's, and Sec-Fetch-Site, when sent, says so.
   */
  requestFromHere(req) {
    const site = req.headers['sec-fetch-site']
    if (site !== undefined && site !== 'same-origin' && site !== 'none') return false
    return req.headers.origin === undefined || this.originAllowed(req)
  }

  /** Why the request is refused, or null: the Host first, then the token, then where it came from. */
  refusal(req, url, upgrade) {
    if (!this.hostAllowed(req)) return 'this server answers only to its loopback address (the Host header named another)'
    if (!this.tokenGiven(req, url)) return 'the token is missing or wrong: open the URL procvisor printed'
    if (upgrade && !this.originAllowed(req)) return "a WebSocket may be opened only by this server's own pages (foreign Origin)"
    if (!upgrade && !this.requestFromHere(req)) return "this server answers only its own pages and the URL opened by hand (the request came from another site's page)"
    return null
  }
}

module.exports = { Guard, newToken }
