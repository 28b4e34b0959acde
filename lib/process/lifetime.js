'use strict'
// A sandbox's lifetime (`timeoutMs`): one timer that calls its end once the time is up, whichever
// side keeps it (a NativeLocalSandbox in this Node process, a persistent sandbox's supervisor).

/** setTimeout's longest delay; a longer lifetime is waited for in steps. */
const MAX_TIMER_MS = 2 ** 31 - 1

class Lifetime {
  /**
   * `timeoutMs` from `since` (a Date.now() value); undefined or null for no lifetime. `onEnd` is
   * called once, never synchronously. `keepAlive`: whether the wait holds Node up.
   */
  constructor(timeoutMs, onEnd, { since = Date.now(), keepAlive = false } = {}) {
    /** When it ends (ms since the epoch), or null when it has no end. */
    this.expiresAt = timeoutMs === undefined || timeoutMs === null ? null : since + timeoutMs
    this._onEnd = onEnd
    this._keepAlive = keepAlive
    this._timer = undefined
    if (this.expiresAt !== null) this._arm()
  }

  _arm() {
    const left = Math.max(0, this.expiresAt - Date.now())
    this._timer = setTimeout(() => {
      // A step short of the end (the limit, or a clock that woke early) waits again.
      if (this.expiresAt - Date.now() > 0) return this._arm()
      this._timer = undefined
      this._onEnd()
    }, Math.min(left, MAX_TIMER_MS))
    if (!this._keepAlive) this._timer.unref()
  }

  /** No end is called from now on. */
  cancel() {
    clearTimeout(this._timer)
    this._timer = undefined
  }
}

module.exports = { Lifetime }
