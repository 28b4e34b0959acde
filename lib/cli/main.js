'use strict'
// lib/cli/, the top layer: `procvisor`, the command line (bin/procvisor.js). Requires
// lib/persistent/ and lib/native/; nothing in lib/ requires it.
//
// This user's persistent sandboxes, their processes, logs and terminals. Exit status: 0 done, 1
// an error (one line on stderr), 2 a usage error.

const { parseArgs } = require('node:util')
const errors = require('../native/errors')
const { CALL_MS, deadline } = require('./deadline')
const { validName } = require('../process/names')

/** A command line that does not say what to do: exit status 2. */
class UsageError extends Error {}

/** setTimeout's longest delay. */
const MAX_TIMEOUT_MS = 2 ** 31 - 1

/** How long `start --ready-port` waits for the port unless --ready-timeout says otherwise. */
const READY_MS = 60_000

/** The restart policies `start --restart` takes (the API's `restart.policy`). */
const POLICIES = ['always', 'on-failure']

const COMMANDS = {
  ls: {
    usage: 'procvisor ls [--json]',
    about: "Lists this user's persistent sandboxes: id, supervisor pid, started, expires (never for one without a lifetime), processes, terminals, working directory.",
    positionals: [],
    options: { json: { type: 'boolean' } },
    run: (a, io) => require('./commands').ls(a, io),
  },
  ps: {
    usage: 'procvisor ps <sandbox> [--json]',
    about:
      "Lists a sandbox's processes (pid, name, state, started, CPU time, CPU% and memory in use and uptime while running, exit code, command) and its terminals (id, pid, state).",
    positionals: ['sandbox'],
    options: { json: { type: 'boolean' } },
    run: (a, io) => require('./commands').ps(a, io),
  },
  logs: {
    usage: 'procvisor logs <sandbox> [pid|name] [--follow] [--since CURSOR] [--stdout] [--stderr] [--timestamps]',
    about:
      "Prints a process's output bytes as they were written: stdout to stdout, stderr to stderr (--stdout or --stderr for one of them). " +
      '--follow goes on until the process ends or Ctrl-C. The last cursor is printed to stderr at the end (`cursor: …`); --since CURSOR resumes after it. ' +
      "Without a pid: every process's lines, each prefixed with its name, else its pid (--follow follows them all; --since needs a pid). " +
      'A restart (`--- restart 2 (exited with code 1) ---`) and a probe verdict that changes (`--- readiness passed: … ---`) are lines of their own on stderr. ' +
      '--timestamps puts the ISO time of its event before each line.',
    positionals: ['sandbox'],
    optional: ['pid'],
    options: { follow: { type: 'boolean', short: 'f' }, since: { type: 'string' }, stdout: { type: 'boolean' }, stderr: { type: 'boolean' }, timestamps: { type: 'boolean', short: 't' } },
    run: (a, io) => require('./commands').logs(a, io),
  },
  attach: {
    usage: 'procvisor attach <sandbox> <terminal>',
    about:
      "Attaches this terminal to a sandbox's terminal (by its id), or to a process started with `pty` (by its pid or name): what you type goes to it, its screen comes here, " +
      'and the window size follows yours. Ctrl-] detaches and leaves the program running.',
    positionals: ['sandbox', 'terminal'],
    options: {},
    run: (a, io) => require('./attach').attach(a, io),
  },
  start: {
    usage: 'procvisor start <sandbox> [--name N] [--restart always|on-failure] [--ready-port P [--ready-timeout MS]] [--pty] [--cwd DIR] [--env NAME=VALUE]... [--json] -- <command> [args...]',
    about:
      'Starts a process in a running sandbox: the command after `--`, run as it is given (no shell), in the working directory of the sandbox (or --cwd, ' +
      'relative to here), with PATH and the --env values. Prints its pid (--json: {"pid","command","name"}). --name gives it a name that ' +
      'logs, kill, restart and describe take for its pid (one live process each). --restart makes it a service with that policy; ' +
      '--pty runs it on a terminal (procvisor attach reaches it). --ready-port waits until 127.0.0.1:P accepts a connection (at most --ready-timeout MS, ' +
      `default ${READY_MS}) and fails, with exit status 1, if the process exits first.`,
    positionals: ['sandbox'],
    argv: true,
    options: {
      name: { type: 'string' },
      restart: { type: 'string' },
      'ready-port': { type: 'string' },
      'ready-timeout': { type: 'string' },
      pty: { type: 'boolean' },
      cwd: { type: 'string' },
      env: { type: 'string', multiple: true },
      json: { type: 'boolean' },
    },
    run: (a, io) => require('./services').start(a, io),
  },
  restart: {
    usage: 'procvisor restart <sandbox> <pid>',
    about:
      'Starts a new run of a service now: its current run is ended as its shutdown says (its signal, else SIGTERM; SIGKILL after its timeout), and the next ' +
      'starts at once, whatever the policy says of that exit. The policy and the count stay, and the count goes up by one. A process started without ' +
      'a restart policy has no next run: an error.',
    positionals: ['sandbox', 'pid'],
    options: {},
    run: (a, io) => require('./services').restart(a, io),
  },
  describe: {
    usage: 'procvisor describe <sandbox> <pid> [--json]',
    about:
      'Shows one process: its command, cwd, the names of its environment (not the values), state, uptime, restart policy, restarts, last exit, ' +
      'probes and their verdicts, CPU time, the memory it uses now and its peak.',
    positionals: ['sandbox', 'pid'],
    options: { json: { type: 'boolean' } },
    run: (a, io) => require('./services').describe(a, io),
  },
  kill: {
    usage: 'procvisor kill <sandbox> <pid|name> [--signal NAME|NUMBER]',
    about:
      "Sends a signal (default SIGTERM) to a process's whole group. A kill ends a service for good: a process started with a restart policy " +
      'is not restarted after it, whatever the signal and whatever its policy says of such an exit.',
    positionals: ['sandbox', 'pid'],
    options: { signal: { type: 'string', short: 's' } },
    run: (a, io) => require('./commands').kill(a, io),
  },
  stop: {
    usage: 'procvisor stop <sandbox>',
    about: 'Stops a sandbox: its processes and its supervisor end; with snapshotOnStop its working directory is captured first, as its own stop() does.',
    positionals: ['sandbox'],
    options: {},
    run: (a, io) => require('./commands').stop(a, io),
  },
  destroy: {
    usage: 'procvisor destroy <sandbox> [--checkpoints DIR]',
    about:
      'Destroys a sandbox: stops it and deletes the checkpoints its id captured. A sandbox that is not running is destroyed too: ' +
      'what its supervisor left if it died (socket, lock file, log) is deleted, and, given --checkpoints DIR (the sandbox\'s ' +
      'checkpointsDirectory, by default .checkpoints beside its working directory), the checkpoints its id captured there.',
    positionals: ['sandbox'],
    options: { checkpoints: { type: 'string' } },
    run: (a, io) => require('./destroy').destroy(a, io),
  },
  checkpoint: {
    usage: 'procvisor checkpoint ls|capture|restore|rm <sandbox> [name] [--json]',
    about:
      "A running sandbox's named checkpoints, in its checkpointsDirectory. ls lists them (--json for JSON); capture captures the working directory " +
      '(as name, else under a name made from the time), sharing the files unchanged since the last capture; restore rolls the working directory ' +
      'back to one in place, copying only what differs, its processes left running; rm deletes one.',
    positionals: ['action', 'sandbox'],
    optional: ['name'],
    options: { json: { type: 'boolean' } },
    run: (a, io) => require('./checkpoint').checkpoint(a, io),
  },
  up: {
    usage: 'procvisor up [-f FILE] [--detach]',
    about:
      'Brings a stack up: reads FILE (default procvisor.config.yaml, .yml or .json here), starts or joins the persistent sandbox of its id ' +
      '(with its timeoutMs; 0: no lifetime), and starts each process not already running by its name once its dependsOn conditions are met ' +
      '(one line on stderr per step). Then follows every process\'s output, each line prefixed with its name, unless --detach; ' +
      'Ctrl-C stops following and the stack runs on.',
    positionals: [],
    options: { file: { type: 'string', short: 'f' }, detach: { type: 'boolean', short: 'd' } },
    run: (a, io) => require('./up').up(a, io),
  },
  down: {
    usage: 'procvisor down [-f FILE]',
    about: "Takes a stack down: stops its processes in the reverse of their start order, each through its shutdown, then the stack's sandbox.",
    positionals: [],
    options: { file: { type: 'string', short: 'f' } },
    run: (a, io) => require('./up').down(a, io),
  },
  web: {
    usage: 'procvisor web [--port N]',
    about:
      "Serves a web view of this user's persistent sandboxes on 127.0.0.1: their processes, each process's log live, terminals in the browser. " +
      'The first line printed is the URL, with the token every request needs. Runs until Ctrl-C.',
    positionals: [],
    options: { port: { type: 'string', short: 'p' } },
    run: (a, io) => require('./web').web(a, io),
  },
}

function help() {
  const lines = ['procvisor: the persistent sandboxes of this user, their processes, logs and terminals.', '', 'Commands:']
  for (const c of Object.values(COMMANDS)) lines.push(`  ${c.usage}`)
  lines.push(
    '',
    `Each answer of a sandbox's supervisor is waited for at most ${CALL_MS / 1000} s (a follow stream, once open, lasts):`,
    '--timeout MS, or PROCVISOR_TIMEOUT_MS in the environment, sets another.',
    'procvisor <command> --help says more. Exit status: 0 done, 1 an error, 2 a usage error.',
  )
  return `${lines.join('\n')}\n`
}

function commandHelp(c) {
  return `usage: ${c.usage} [--timeout MS]\n\n${c.about}\n\n--timeout MS: how long to wait for each answer of the supervisor (default ${CALL_MS}, or PROCVISOR_TIMEOUT_MS).\n`
}

/** The deadline of each call, in ms: `--timeout`, else PROCVISOR_TIMEOUT_MS, else the default. */
function deadlineOf(given, env) {
  const [value, name] = given !== undefined ? [given, '--timeout'] : [env.PROCVISOR_TIMEOUT_MS, 'PROCVISOR_TIMEOUT_MS']
  if (value === undefined || value === '') return CALL_MS
  const ms = /^[0-9]{1,10}$/.test(value) ? Number(value) : NaN
  if (!(ms >= 1 && ms <= MAX_TIMEOUT_MS)) throw new UsageError(`${name} must be a number of milliseconds from 1 to ${MAX_TIMEOUT_MS}, not ${JSON.stringify(value)}`)
  return ms
}

/** A number given on the command line, from `min` to `max`; UsageError for anything else. */
function integerArg(value, name, min, max) {
  const n = /^[0-9]{1,10}$/.test(value) ? Number(value) : NaN
  if (!(n >= min && n <= max)) throw new UsageError(`${name} must be a number from ${min} to ${max}, not ${JSON.stringify(value)}`)
  return n
}

/** The options of `start`, checked before anything runs. */
function startArgs(args) {
  if (args.name !== undefined && !validName(args.name)) throw new UsageError(`--name must be 1 to 64 of A-Z a-z 0-9 . _ -, not all digits, not ${JSON.stringify(args.name)}`)
  if (args.restart !== undefined && !POLICIES.includes(args.restart)) throw new UsageError(`--restart must be ${POLICIES.join(' or ')}, not ${JSON.stringify(args.restart)}`)
  if (args['ready-port'] !== undefined) args.readyPort = integerArg(args['ready-port'], '--ready-port', 1, 65535)
  if (args['ready-timeout'] !== undefined && args.readyPort === undefined) throw new UsageError('--ready-timeout needs --ready-port')
  args.readyTimeout = args['ready-timeout'] === undefined ? READY_MS : integerArg(args['ready-timeout'], '--ready-timeout', 1, MAX_TIMEOUT_MS)
  if (args.env !== undefined) {
    const env = {}
    for (const pair of args.env) {
      const at = pair.indexOf('=')
      if (at < 1) throw new UsageError(`--env takes NAME=VALUE, not ${JSON.stringify(pair)}`)
      env[pair.slice(0, at)] = pair.slice(at + 1)
    }
    args.env = env
  }
}

/** The command and its arguments, checked; UsageError for anything else. */
function parse(argv) {
  const [name, ...all] = argv
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') return { help: help() }
  const command = COMMANDS[name]
  if (!command) throw new UsageError(`unknown command ${JSON.stringify(name)}`)
  // A command that runs a program takes it whole after `--`, its own options included.
  const dashes = command.argv ? all.indexOf('--') : -1
  const rest = dashes === -1 ? all : all.slice(0, dashes)
  let parsed
  try {
    parsed = parseArgs({ args: rest, options: { ...command.options, help: { type: 'boolean', short: 'h' }, timeout: { type: 'string' } }, allowPositionals: true, strict: true })
  } catch (e) {
    throw new UsageError(`${e.message.split('\n')[0]}\nusage: ${command.usage}`)
  }
  if (parsed.values.help) return { help: commandHelp(command) }
  const program = dashes === -1 ? [] : all.slice(dashes + 1)
  if (command.argv && program.length === 0) throw new UsageError(`${name} needs the command to run after \`--\`\nusage: ${command.usage}`)
  const { positionals } = parsed
  const optional = command.optional ?? []
  if (positionals.length < command.positionals.length || positionals.length > command.positionals.length + optional.length) {
    const takes = [...command.positionals.map((p) => `<${p}>`), ...optional.map((p) => `[${p}]`)]
    throw new UsageError(`${name} takes ${takes.join(' ') || 'no arguments'}\nusage: ${command.usage}`)
  }
  const args = { ...parsed.values, timeout: deadlineOf(parsed.values.timeout, process.env) }
  ;[...command.positionals, ...optional].forEach((p, i) => (args[p] = positionals[i]))
  if (args.pid !== undefined && !/^[1-9][0-9]*$/.test(args.pid) && !validName(args.pid)) {
    throw new UsageError(`<pid> must be a process id (a positive integer) or a process name, not ${JSON.stringify(args.pid)}`)
  }
  if (args.signal !== undefined && /^[0-9]+$/.test(args.signal)) args.signal = Number(args.signal)
  if (command.argv) {
    args.argv = program
    startArgs(args)
  }
  if (name === 'logs' && args.pid === undefined && args.since !== undefined) throw new UsageError(`--since needs a <pid>: a cursor is of one process's log\nusage: ${command.usage}`)
  if (name === 'logs') args.streams = new Set(args.stdout || args.stderr ? [args.stdout && 'stdout', args.stderr && 'stderr'].filter(Boolean) : ['stdout', 'stderr'])
  return { command, args }
}

/**
 * Runs the command line `argv` (without node and the script); resolves with the exit status.
 * `io`: `{ out, err }` streams (process.stdout and process.stderr by default).
 */
async function main(argv, io = { out: process.stdout, err: process.stderr }) {
  let job
  try {
    job = parse(argv)
  } catch (e) {
    if (!(e instanceof UsageError)) throw e
    io.err.write(`procvisor: ${e.message}\n`)
    return 2
  }
  if (job.help) {
    io.out.write(job.help)
    return 0
  }
  deadline.ms = job.args.timeout
  try {
    return await job.command.run(job.args, io)
  } catch (e) {
    // The reader of the output went away (`| head`): what it wanted, it had.
    if (e && e.code === 'EPIPE') return 0
    // A bad value given on the command line is a usage error; the rest are errors of the run.
    const usage = e instanceof UsageError || e instanceof errors.InvalidProcessSignalError
    const text = e && typeof e.message === 'string' ? e.message : String(e)
    io.err.write(`procvisor: ${text.split('\n')[0]}\n`)
    return usage ? 2 : 1
  }
}

module.exports = { main, parse, UsageError }
