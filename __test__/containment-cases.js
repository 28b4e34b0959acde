'use strict'
// The ways a descendant leaves its process group, each ending in a `sleep` that outlives its
// root. Shared by containment.test.js and its fixture.
const ESCAPEES = {
  // setsid(1) forks when it leads its group: the root exits, the child leads a new session.
  'setsid sleep': ['setsid', 'sleep', '300'],
  // The root itself joins another group (its parent's), then becomes sleep.
  'a setpgid root': ['perl', '-e', 'setpgrp(0, getpgrp(getppid())) or die "setpgrp: $!"; exec "sleep", "300"'],
  // Job control puts each job in a group of its own.
  "bash -c 'set -m; sleep & wait'": ['bash', '-c', 'set -m; sleep 300 & wait'],
  // The daemon's double fork, with a new session in between.
  'a double fork': ['perl', '-MPOSIX', '-e', 'fork and exit; POSIX::setsid(); fork and exit; exec "sleep", "300"'],
}

module.exports = { ESCAPEES }
