'use strict'
// A terminal page's WebSocket: xterm.js's attach addon protocol with a resize message, served by
// connectTerminal (lib/faces/connect.js, which Terminal#connect uses too). The page asks for the
// cursors, so that after a dropped connection it resumes with `since`, with no repeat; a reload
// starts from the first retained byte, which draws the screen again.

const { connectTerminal } = require('../faces/connect')

/** Serves `target` (a Terminal, a process started with `pty`, or any process with stdin) on `ws`. */
function serveTerminal(target, ws, { since }) {
  return connectTerminal(target, ws, { since, cursors: true }).catch(() => {
    // Said to the page by the close code and reason; nothing to add here.
  })
}

module.exports = { serveTerminal }
