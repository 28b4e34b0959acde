'use strict'
// Launches in flight, for whatever closes or stops the processes they start: a close that only
// killed what was already recorded would miss a process whose launch completes a moment later,
// and that process would outlive a close that reported none. The process manager, Mastra's
// process manager and a persistent sandbox's supervisor each keep one.

class Launches {
  constructor() {
    this._inFlight = new Set()
  }

  /** Counts `launch` (a promise) as in flight until it settles; returns it. */
  track(launch) {
    this._inFlight.add(launch)
    const done = () => this._inFlight.delete(launch)
    launch.then(done, done)
    return launch
  }

  /** Resolves once none is in flight, ones tracked while this waits included; never rejects. */
  async settled() {
    while (this._inFlight.size > 0) await Promise.allSettled([...this._inFlight])
  }

  get size() {
    return this._inFlight.size
  }
}

module.exports = { Launches }
