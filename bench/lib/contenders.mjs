// The contenders, each as the smallest idiomatic use of its own API for one job:
// - spawn until exit (`/bin/true` as argv, `sh -c true` as a shell command);
// - stream a producer's stdout to JS (callbacks, readers, line iterators);
// - keep a long-lived `sleep` tracked (idle memory).
// Every child gets the same environment (PATH only) so that no contender pays for a larger envp.
//
// A contender's `run*` function measures itself where only it can: the synchronous time of its
// spawn call (what the event loop is blocked for before the call returns).

import cp from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { performance } from 'node:perf_hooks'
import { CHILD_ENV, procvisor } from './setup.mjs'

const now = () => performance.now()

/** Opens every library once: a procvisor ProcessManager, a Mastra LocalSandbox, execa, tinyexec. */
export async function openContenders() {
  const { ProcessManager } = procvisor()
  const pm = new ProcessManager({ workingDirectory: os.tmpdir() })
  // The same launches contained by process groups only, to show what a cgroup per tree costs.
  const pmGroups = pm.containment === 'cgroup' ? new ProcessManager({ workingDirectory: os.tmpdir(), containment: 'process-group' }) : null
  const { execa } = await import('execa')
  const { x } = await import('tinyexec')
  let sandbox = null
  let mastraError = null
  const sandboxDir = fs.mkdtempSync(path.join(os.tmpdir(), 'procvisor-bench-mastra-'))
  try {
    const { LocalSandbox } = await import('@mastra/core/workspace')
    sandbox = new LocalSandbox({ workingDirectory: sandboxDir, env: {} })
    // Start it now so that its one-time setup is not charged to the first spawn.
    const h = await sandbox.processes.spawn('true')
    await h.wait()
    sandbox.processes.release(h.pid)
  } catch (e) {
    mastraError = e
    sandbox = null
  }
  return {
    pm,
    pmGroups,
    execa,
    x,
    sandbox,
    mastraError,
    async close() {
      await pm.close()
      if (pmGroups) await pmGroups.close()
      if (sandbox) {
        try {
          await sandbox.destroy()
        } catch {}
      }
      fs.rmSync(sandboxDir, { recursive: true, force: true })
    },
  }
}

function cpUntilClose(file, args, opts) {
  return new Promise((resolve, reject) => {
    const a = now()
    const c = cp.spawn(file, args, { env: CHILD_ENV, ...opts })
    const sync = now() - a
    c.on('error', reject)
    c.on('close', (code) => (code === 0 ? resolve(sync) : reject(new Error(`${file} exited with ${code}`))))
  })
}

function check(code, what) {
  if (code !== 0) throw new Error(`${what} exited with ${code}`)
}

/**
 * Spawn-until-exit contenders for one command form. Each `run()` spawns once, waits for the exit
 * with the output drained (each API's own notion), and resolves with the synchronous µs of the
 * spawn call (undefined when the API does its spawn after an await, as Mastra's manager does).
 * The limit has `limitArgv` instead: bench/limit runs whole batches.
 */
export function spawnContenders(ctx, form) {
  const { pm, pmGroups, execa, x, sandbox } = ctx
  const argv = form === 'argv' ? ['/bin/true'] : ['/bin/sh', '-c', 'true']
  const list = []
  const procvisorExec = (name, m = pm) => ({
    name,
    procvisor: true,
    async run() {
      const a = now()
      const p = m.exec(argv)
      const sync = now() - a
      const proc = await p
      check(await proc.exitCode, 'procvisor exec')
      return sync
    },
  })
  if (form === 'argv') {
    list.push(procvisorExec('procvisor exec(argv)'))
    if (pmGroups) list.push(procvisorExec('procvisor exec(argv), process groups only', pmGroups))
  } else {
    list.push({
      name: "procvisor spawn('true')",
      procvisor: true,
      async run() {
        const a = now()
        const p = pm.spawn('true')
        const sync = now() - a
        const h = await p
        const r = await h.wait()
        pm.release(h.pid)
        check(r.exitCode, 'procvisor spawn')
        return sync
      },
    })
    list.push(procvisorExec('procvisor exec([sh,-c,true])'))
  }
  list.push({ name: 'child_process.spawn', run: () => cpUntilClose(argv[0], argv.slice(1)) })
  list.push({
    name: form === 'argv' ? 'execa' : 'execa(shell: true)',
    async run() {
      const a = now()
      const p = form === 'argv' ? execa(argv[0], [], { env: CHILD_ENV, extendEnv: false }) : execa('true', [], { shell: true, env: CHILD_ENV, extendEnv: false })
      const sync = now() - a
      check((await p).exitCode, 'execa')
      return sync
    },
  })
  list.push({
    name: 'tinyexec',
    async run() {
      const a = now()
      const p = x(argv[0], argv.slice(1), { nodeOptions: { env: CHILD_ENV }, inheritEnv: false })
      const sync = now() - a
      check((await p).exitCode, 'tinyexec')
      return sync
    },
  })
  if (form === 'shell' && sandbox) {
    list.push({
      name: "Mastra LocalSandbox spawn('true')",
      async run() {
        const h = await sandbox.processes.spawn('true')
        const r = await h.wait()
        sandbox.processes.release(h.pid)
        check(r.exitCode, 'mastra')
        return undefined
      },
    })
  }
  list.push({ name: 'limit (Rust std::process)', limitArgv: argv })
  return list
}

// ---- output to JS -----------------------------------------------------------------------------

/**
 * Output contenders: each `run(shellCommand, argv)` streams a producer's stdout to JS and resolves
 * with the bytes (or UTF-16 units, equal for ASCII) it was handed. tinyexec streams only line by
 * line (its async iterator), so it is included only where asked (`tinyexecLines`).
 */
export function outputContenders(ctx, { reader = true, tinyexecLines = false } = {}) {
  const { pm, execa, x, sandbox } = ctx
  const list = [
    {
      name: 'procvisor onStdout',
      procvisor: true,
      async run(command) {
        let n = 0
        const h = await pm.spawn(command, { onStdout: (s) => (n += s.length), maxRetainedBytes: 0, stdinMode: 'ignore' })
        const r = await h.wait()
        pm.release(h.pid)
        check(r.exitCode, 'procvisor')
        return n
      },
    },
  ]
  if (reader) {
    list.push({
      name: 'procvisor reader',
      procvisor: true,
      async run(command) {
        let n = 0
        const h = await pm.spawn(command, { maxRetainedBytes: 0, stdinMode: 'ignore' })
        try {
          for await (const chunk of h.reader) n += chunk.length
        } catch (e) {
          // Do not leave the producer running into the next contender's measurement.
          await h.kill()
          await h.wait()
          pm.release(h.pid)
          throw e
        }
        const r = await h.wait()
        pm.release(h.pid)
        check(r.exitCode, 'procvisor reader')
        return n
      },
    })
  }
  list.push({
    name: "child_process 'data'",
    run(command, argv) {
      return new Promise((resolve, reject) => {
        let n = 0
        const c = cp.spawn(argv[0], argv.slice(1), { env: CHILD_ENV, stdio: ['ignore', 'pipe', 'pipe'] })
        c.stdout.on('data', (d) => (n += d.length))
        c.on('error', reject)
        c.on('close', (code) => (code === 0 ? resolve(n) : reject(new Error(`exit ${code}`))))
      })
    },
  })
  list.push({
    name: 'execa buffer:false',
    async run(command, argv) {
      let n = 0
      const p = execa(argv[0], argv.slice(1), { env: CHILD_ENV, extendEnv: false, buffer: false, stdin: 'ignore' })
      p.stdout.on('data', (d) => (n += d.length))
      check((await p).exitCode, 'execa')
      return n
    },
  })
  if (tinyexecLines) {
    list.push({
      name: 'tinyexec (line iterator)',
      async run(command, argv) {
        let n = 0
        // Lines arrive without their '\n'; count it back so the byte totals compare.
        for await (const line of x(argv[0], argv.slice(1), { nodeOptions: { env: CHILD_ENV, stdio: ['ignore', 'pipe', 'pipe'] }, inheritEnv: false })) n += line.length + 1
        return n
      },
    })
  }
  if (sandbox) {
    list.push({
      name: 'Mastra LocalSandbox onStdout',
      async run(command) {
        let n = 0
        const h = await sandbox.processes.spawn(command, { onStdout: (s) => (n += s.length), maxRetainedBytes: 0, stdinMode: 'ignore' })
        const r = await h.wait()
        sandbox.processes.release(h.pid)
        check(r.exitCode, 'mastra')
        return n
      },
    })
  }
  list.push({ name: 'limit (Rust blocking read)', limit: true })
  return list
}
