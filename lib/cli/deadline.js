'use strict'
// The deadline of each call the command line makes to a supervisor. Here, apart, so that parsing
// the command line (and --help) loads nothing native.

/**
 * How long a supervisor has to answer each call, unless `--timeout` or PROCVISOR_TIMEOUT_MS says
 * otherwise: one that greets and then answers nothing is reported, not waited for without end.
 */
const CALL_MS = 10_000

const deadline = { ms: CALL_MS }

module.exports = { CALL_MS, deadline }
