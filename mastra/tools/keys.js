'use strict'
// What an agent types into a terminal, spelled as text (models write text, not bytes), and
// what a terminal printed, as text to search.

/** The named keys and what a terminal sends for each (xterm's sequences). */
const KEYS = {
  enter: '\r',
  return: '\r',
  tab: '\t',
  escape: '\x1b',
  esc: '\x1b',
  backspace: '\x7f',
  delete: '\x1b[3~',
  space: ' ',
  up: '\x1b[A',
  down: '\x1b[B',
  right: '\x1b[C',
  left: '\x1b[D',
  home: '\x1b[H',
  end: '\x1b[F',
  pageup: '\x1b[5~',
  pagedown: '\x1b[6~',
}

/** `Ctrl-C`, `Ctrl+c`: the control character of a letter, or of `[ \ ] ^ _ @`. */
function control(name) {
  const m = /^ctrl[-+](.)$/i.exec(name)
  if (!m) return undefined
  const code = m[1].toUpperCase().charCodeAt(0)
  return code >= 0x40 && code <= 0x5f ? String.fromCharCode(code - 0x40) : undefined
}

/**
 * The bytes of `input`: text as it is, a newline as Enter, and `{Key}` as that key, where Key is
 * one of KEYS (any case) or `Ctrl-<letter>`. Braces around anything else stay text (`${HOME}`,
 * `{ "a": 1 }`), so code types as written.
 */
function keystrokes(input) {
  return input.replace(/\r?\n/g, '\r').replace(/\{([A-Za-z]+(?:[-+].)?)\}/g, (whole, name) => KEYS[name.toLowerCase()] ?? control(name) ?? whole)
}

/** The key spelling, for the tools' descriptions. */
const KEY_HELP =
  'Named keys are written in braces: {Enter}, {Tab}, {Escape}, {Backspace}, {Delete}, {Up}, {Down}, {Left}, {Right}, {Home}, {End}, {PageUp}, {PageDown}, {Space}, and {Ctrl-C} (any letter: {Ctrl-D}, {Ctrl-Z}, ...). A newline in the text is Enter. Other braces are typed as they are.'

// Escape sequences: CSI (colours, cursor moves), OSC (titles, ended by BEL or ST), and the
// two-byte ones; then the carriage returns a terminal prints before each newline.
const ESCAPES = /\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]|\r/g

/** What a terminal printed, as the text a reader sees in it. */
function plainText(output) {
  return output.replace(ESCAPES, '')
}

module.exports = { keystrokes, plainText, KEY_HELP }
