// The process checks of Mastra's local-sandbox.test.ts (constructor, clone, lifecycle, setEnv,
// executeCommand, spawn failures, timeouts, working directory, env), run against
// NativeLocalSandbox with real processes, plus what procvisor does beyond Mastra: the whole group
// (grandchildren included) dies on timeout and stop(), SIGKILL follows an ignored SIGTERM, and no
// child outlives the Node process.
import { afterEach, beforeEach, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import * as fs from 'node:fs/promises'
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import * as os from 'node:os'
import * as path from 'node:path'
import {
  LocalSandbox,
  MastraSandbox,
  ProcessHandle,
  SandboxProcessManager,
  isIsolationAvailable,
} from '@mastra/core/workspace'
import * as mastraEntry from 'procvisor/mastra'
import { NativeLocalSandbox, NativeProcessHandle, NativeProcessManager } from 'procvisor/mastra'
import { ROOT, alive, collector, eventually, tempDir } from './helpers.mjs'
import { sandboxMaker } from './backends.mjs'

let tmp
let sandbox
const extra = []
const make = sandboxMaker(extra)

beforeEach(() => {
  tmp = tempDir('procvisor-local-sandbox-')
  sandbox = new NativeLocalSandbox({ workingDirectory: tmp })
})
afterEach(async () => {
  for (const sb of [sandbox, ...extra.splice(0)]) await sb._destroy().catch(() => {})
  await fs.rm(tmp, { recursive: true, force: true })
})

describe('module', { timeout: 20000 }, () => {
  it('the one-line swap: NativeLocalSandbox is a LocalSandbox of the app’s own @mastra/core', async () => {
    assert.equal(mastraEntry.LocalSandbox, NativeLocalSandbox)
    assert.ok(sandbox instanceof LocalSandbox)
    assert.ok(sandbox instanceof MastraSandbox)
    assert.ok(sandbox.processes instanceof NativeProcessManager)
    assert.ok(sandbox.processes instanceof SandboxProcessManager)
    assert.equal(sandbox.processes.sandbox, sandbox)
    const h = await sandbox.processes.spawn('true')
    assert.ok(h instanceof NativeProcessHandle)
    assert.ok(h instanceof ProcessHandle)
    await h.wait()
  })

  it('the CommonJS entry builds the same classes over Mastra’s CommonJS build', async () => {
    const require = createRequire(import.meta.url)
    const cjs = require('procvisor/mastra')
    const cjsWorkspace = require('@mastra/core/workspace')
    const sb = new cjs.NativeLocalSandbox({ workingDirectory: tmp })
    extra.push(sb)
    assert.ok(sb instanceof cjsWorkspace.LocalSandbox)
    assert.ok(sb.processes instanceof cjsWorkspace.SandboxProcessManager)
    const r = await sb.executeCommand('echo', ['from cjs'])
    assert.equal(r.stdout, 'from cjs\n')
    assert.equal(r.command, "echo 'from cjs'")
  })
})

describe('constructor', { timeout: 20000 }, () => {
  it('should create sandbox with default values', () => {
    const defaultSandbox = new NativeLocalSandbox()
    assert.equal(defaultSandbox.provider, 'local')
    assert.equal(defaultSandbox.name, 'LocalSandbox')
    assert.ok(defaultSandbox.id)
    assert.equal(defaultSandbox.status, 'pending')
    assert.equal(defaultSandbox.workingDirectory, path.join(process.cwd(), '.sandbox'))
  })

  it('should accept custom id and expand ~ in working directory', () => {
    const custom = new NativeLocalSandbox({ id: 'custom-sandbox-id', workingDirectory: '~/my-sandbox' })
    assert.equal(custom.id, 'custom-sandbox-id')
    assert.equal(custom.workingDirectory, path.join(os.homedir(), 'my-sandbox'))
  })
})

describe('clone', { timeout: 20000 }, () => {
  it('constructs an unstarted sibling inheriting configuration (a NativeLocalSandbox)', () => {
    const template = make({ workingDirectory: tmp, env: { BASE: '1' } })
    const child = template.clone({ id: 'mc-project-1' })
    assert.ok(child instanceof NativeLocalSandbox)
    assert.ok(child instanceof LocalSandbox)
    assert.ok(child.processes instanceof NativeProcessManager)
    assert.equal(child.processes.sandbox, child)
    assert.notEqual(child, template)
    assert.equal(child.id, 'mc-project-1')
    assert.equal(child.status, 'pending')
    assert.equal(child.workingDirectory, tmp)
    assert.equal(child.isolation, template.isolation)
  })

  it('applies a derived working directory override', () => {
    const template = make({ workingDirectory: tmp })
    const childWorkdir = path.join(tmp, 'child')
    const child = template.clone({ workingDirectory: childWorkdir })
    assert.equal(child.workingDirectory, childWorkdir)
    assert.equal(template.workingDirectory, tmp)
  })

  it('applies env overrides and can execute commands after start', async () => {
    const template = make({ workingDirectory: tmp, env: { PATH: process.env.PATH } })
    const child = template.clone({ env: { PATH: process.env.PATH ?? '', CLONED_VAR: 'cloned-value' } })
    extra.push(child)
    await child._start()
    const result = await child.executeCommand('sh', ['-c', 'echo "$CLONED_VAR"'])
    assert.equal(result.success, true)
    assert.equal(result.stdout.trim(), 'cloned-value')
  })

  it('inherits the template env when no env override is passed', async () => {
    const template = make({ workingDirectory: tmp, env: { PATH: process.env.PATH, TEMPLATE_VAR: 'from-template' } })
    const child = template.clone()
    extra.push(child)
    await child._start()
    const result = await child.executeCommand('sh', ['-c', 'echo "$TEMPLATE_VAR"'])
    assert.equal(result.stdout.trim(), 'from-template')
  })

  it('ignores sandboxId and idleTimeoutMinutes (no local equivalent)', () => {
    const template = make({ workingDirectory: tmp })
    const child = template.clone({ sandboxId: 'ignored', idleTimeoutMinutes: 15, id: 'local-child' })
    assert.equal(child.id, 'local-child')
  })
})

describe('lifecycle', { timeout: 20000 }, () => {
  it('should start, stop and destroy', async () => {
    assert.equal(sandbox.status, 'pending')
    assert.deepEqual(await sandbox._start(), { outcome: 'connected' })
    assert.equal(sandbox.status, 'running')
    await sandbox._stop()
    assert.equal(sandbox.status, 'stopped')
    await sandbox._destroy()
    assert.equal(sandbox.status, 'destroyed')
  })

  it('should kill background processes on stop(): the whole group is gone within 2 s', async () => {
    await sandbox._start()
    const handle = await sandbox.processes.spawn('sleep 30')
    // A child and a grandchild of the shell, each printing its pid.
    const c = collector(/^(\d+)\n(\d+)\n/)
    const tree = await sandbox.processes.spawn("sleep 30 & echo $!; sh -c 'sleep 30 & echo $!; wait' & wait", { onStdout: c.onData })
    const [, a, b] = await c.matched
    const grandchildren = [Number(a), Number(b)]
    assert.equal((await sandbox.processes.list()).length, 2)
    for (const pid of grandchildren) assert.ok(alive(pid), `grandchild ${pid} runs before stop()`)

    const t0 = Date.now()
    await sandbox._stop()
    assert.equal(sandbox.status, 'stopped')
    assert.deepEqual(await sandbox.processes.list(), [])
    const gone = await eventually(() => {
      for (const pid of [Number(handle.pid), Number(tree.pid)]) {
        try {
          process.kill(pid, 0)
          return false
        } catch {}
      }
      return grandchildren.every((pid) => !alive(pid))
    }, 2000)
    assert.ok(gone, 'every process of both groups is gone within 2 s of stop()')
    assert.ok(Date.now() - t0 < 2000)
  })

  it('runs a once-per-directory setup through a fatal onStart hook branching on outcome', async () => {
    const dir = path.join(tmp, 'boot')
    const setup = async ({ sandbox: sb, outcome }) => {
      if (outcome === 'created') await sb.executeCommand('touch setup-ran.txt')
    }
    const first = make({ workingDirectory: dir, onStart: setup })
    await first._start()
    await fs.stat(path.join(dir, 'setup-ran.txt'))
    await fs.rm(path.join(dir, 'setup-ran.txt'))
    const second = make({ workingDirectory: dir, onStart: setup })
    await second._start()
    await assert.rejects(fs.stat(path.join(dir, 'setup-ran.txt')))
  })
})

describe('env overlay (setEnv)', { timeout: 20000 }, () => {
  it('makes setEnv values visible to real processes and supports rotation', async () => {
    sandbox.setEnv((env) => ({ ...env, DEMO_TOKEN: 'tok_first' }))
    const first = await sandbox.executeCommand('printenv', ['DEMO_TOKEN'])
    assert.equal(first.stdout.trim(), 'tok_first')
    sandbox.setEnv((env) => ({ ...env, DEMO_TOKEN: 'tok_rotated' }))
    const rotated = await sandbox.executeCommand('printenv', ['DEMO_TOKEN'])
    assert.equal(rotated.stdout.trim(), 'tok_rotated')
    // and through processes.spawn, with the per-call env still winning
    const h = await sandbox.processes.spawn('echo $DEMO_TOKEN $OTHER', { env: { OTHER: 'o' } })
    assert.equal((await h.wait()).stdout, 'tok_rotated o\n')
    const h2 = await sandbox.processes.spawn('echo $DEMO_TOKEN', { env: { DEMO_TOKEN: 'per-call' } })
    assert.equal((await h2.wait()).stdout, 'per-call\n')
  })
})

describe('executeCommand', { timeout: 20000 }, () => {
  beforeEach(async () => {
    await sandbox._start()
  })

  it('should execute command successfully', async () => {
    const result = await sandbox.executeCommand('echo', ['Hello, World!'])
    assert.equal(result.success, true)
    assert.equal(result.stdout.trim(), 'Hello, World!')
    assert.equal(result.exitCode, 0)
    assert.ok(result.executionTimeMs >= 0)
    assert.equal(result.command, "echo 'Hello, World!'")
  })

  it('quotes args exactly as Mastra does', async () => {
    const args = ["it's", 'a b', '$HOME', '*', 'plain-arg/x=1:y@z', '']
    const result = await sandbox.executeCommand('printf', ['[%s]', ...args])
    assert.equal(result.stdout, args.map((a) => `[${a}]`).join(''))
    assert.equal(result.command, `printf '[%s]' 'it'\\''s' 'a b' '$HOME' '*' plain-arg/x=1:y@z ''`)
  })

  it('should release the completed foreground process handle (list() is empty afterwards)', async () => {
    const result = await sandbox.executeCommand('echo', ['released'])
    assert.equal(result.stdout.trim(), 'released')
    assert.deepEqual(await sandbox.processes.list(), [])
    const failed = await sandbox.executeCommand('sh', ['-c', 'exit 9'])
    assert.equal(failed.exitCode, 9)
    assert.deepEqual(await sandbox.processes.list(), [])
  })

  it('should handle command failure', async () => {
    const result = await sandbox.executeCommand('ls', ['nonexistent-directory-12345'])
    assert.equal(result.success, false)
    assert.notEqual(result.exitCode, 0)
  })

  it('should decode UTF-8 characters split across stdout chunks (F0 9F, 10 ms later 99 82)', async () => {
    const script = [
      'const b = Buffer.from([0xf0, 0x9f, 0x99, 0x82]);',
      'process.stdout.write(b.subarray(0, 2));',
      'setTimeout(() => process.stdout.write(b.subarray(2)), 10);',
    ].join('')
    const chunks = []
    const result = await sandbox.executeCommand('node', ['-e', script], { onStdout: (d) => chunks.push(d) })
    assert.equal(result.success, true)
    assert.deepEqual(Buffer.from(result.stdout, 'utf8'), Buffer.from([0xf0, 0x9f, 0x99, 0x82]))
    assert.deepEqual(chunks, ['\u{1F642}'], 'the listener got the character whole, once')
  })

  it('should use the working directory, an absolute cwd, and resolve a relative cwd against it', async () => {
    await fs.writeFile(path.join(tmp, 'test-file.txt'), 'content')
    const subDir = path.join(tmp, 'subdir')
    await fs.mkdir(subDir)
    await fs.writeFile(path.join(subDir, 'subfile.txt'), 'content')

    const inWd = await sandbox.executeCommand('ls', ['-1'])
    assert.match(inWd.stdout, /test-file\.txt/)
    const abs = await sandbox.executeCommand('ls', ['-1'], { cwd: subDir })
    assert.match(abs.stdout, /subfile\.txt/)
    const dot = await sandbox.executeCommand('pwd', [], { cwd: '.' })
    assert.equal(await fs.realpath(dot.stdout.trim()), tmp)
    const rel = await sandbox.executeCommand('ls', ['-1'], { cwd: './subdir' })
    assert.match(rel.stdout, /subfile\.txt/)
    const bare = await sandbox.executeCommand('pwd', [], { cwd: 'subdir' })
    assert.equal(bare.stdout.trim(), subDir)
    const spawned = await sandbox.processes.spawn('pwd', { cwd: 'subdir' })
    assert.equal((await spawned.wait()).stdout.trim(), subDir)
  })

  it('should pass environment variables', async () => {
    const result = await sandbox.executeCommand('printenv', ['MY_CMD_VAR'], { env: { MY_CMD_VAR: 'cmd-value' } })
    assert.equal(result.success, true)
    assert.equal(result.stdout.trim(), 'cmd-value')
  })

  it('should auto-start when executeCommand is called without start()', async () => {
    const newSandbox = make({ workingDirectory: tmp })
    const result = await newSandbox.executeCommand('echo', ['test'])
    assert.equal(result.success, true)
    assert.equal(result.stdout.trim(), 'test')
    assert.equal(newSandbox.status, 'running')
  })

  it('retains all output by default (Infinity), or what maxRetainedBytes says', async () => {
    const all = await sandbox.executeCommand('head -c 1500000 /dev/zero | tr "\\0" a')
    assert.equal(all.stdout.length, 1500000)
    assert.equal(all.stdoutTruncated, false)
    const some = await sandbox.executeCommand('printf 0123456789', [], { maxRetainedBytes: 4 })
    assert.equal(some.stdout, '6789')
    assert.equal(some.stdoutTruncated, true)
    assert.equal(some.stdoutDroppedBytes, 6)
  })

  it('an abortSignal kills the command (exit 128, killed)', async () => {
    const controller = new AbortController()
    setTimeout(() => controller.abort(), 100)
    const t0 = Date.now()
    const result = await sandbox.executeCommand('sleep', ['30'], { abortSignal: controller.signal })
    assert.equal(result.exitCode, 128)
    assert.equal(result.killed, true)
    assert.ok(Date.now() - t0 < 2000)
    assert.deepEqual(await sandbox.processes.list(), [])
  })
})

describe('spawn failure handling', { timeout: 20000 }, () => {
  beforeEach(async () => {
    await sandbox._start()
  })

  it('should throw a descriptive error when cwd does not exist, and track nothing', async () => {
    await assert.rejects(sandbox.executeCommand('pwd', [], { cwd: '/nonexistent/path/that/does/not/exist' }), /ENOENT|no such file or directory|cwd/i)
    await assert.rejects(sandbox.processes.spawn('pwd', { cwd: 'missing-subdir' }), /ENOENT|no such file or directory|cwd/i)
    assert.deepEqual(await sandbox.processes.list(), [])
  })

  it('should return exit code 127 for nonexistent command', async () => {
    const result = await sandbox.executeCommand('nonexistent-command-xyz-12345', [])
    assert.equal(result.success, false)
    assert.equal(result.exitCode, 127)
    assert.match(result.stderr, /not found/i)
  })

  it('rejects a bad maxRetainedBytes (or timeout) with a RangeError before anything runs', async () => {
    for (const bad of [-1, 1.5, NaN]) {
      await assert.rejects(sandbox.processes.spawn('touch should-not-exist', { maxRetainedBytes: bad }), RangeError)
    }
    for (const bad of [-1, Infinity]) {
      await assert.rejects(sandbox.processes.spawn('touch should-not-exist', { timeout: bad }), RangeError)
    }
    assert.deepEqual(await sandbox.processes.list(), [])
    await assert.rejects(fs.stat(path.join(tmp, 'should-not-exist')))
  })
})

describe('timeout handling', { timeout: 20000 }, () => {
  beforeEach(async () => {
    await sandbox._start()
  })

  it('should respect custom timeout for command execution', async () => {
    const result = await sandbox.executeCommand('sleep', ['5'], { timeout: 100 })
    assert.equal(result.success, false)
    assert.equal(result.exitCode, 124)
    assert.equal(result.timedOut, true)
    assert.equal(result.killed, true)
    assert.ok(result.stderr.endsWith('\nProcess timed out after 100ms'))
  })

  it('should timeout a compound command and kill the process group (grandchild dead)', async () => {
    const t0 = Date.now()
    const result = await sandbox.executeCommand('sleep 30 & echo $! > grandchild.pid; sleep 2 && echo done', [], { timeout: 200 })
    assert.equal(result.success, false)
    assert.equal(result.exitCode, 124)
    assert.equal(result.timedOut, true)
    assert.doesNotMatch(result.stdout, /done/)
    assert.ok(Date.now() - t0 < 1500)
    const grandchild = Number(readFileSync(path.join(tmp, 'grandchild.pid'), 'utf8'))
    assert.ok(grandchild > 0)
    assert.ok(await eventually(() => !alive(grandchild), 1000), `grandchild ${grandchild} is dead`)
  })

  it('a group that ignores SIGTERM gets SIGKILL after the grace period (Mastra would leave it running)', async () => {
    const t0 = Date.now()
    const result = await sandbox.executeCommand("trap '' TERM; sleep 30 & echo $! > stubborn.pid; wait", [], { timeout: 100 })
    const elapsed = Date.now() - t0
    assert.equal(result.exitCode, 124)
    assert.equal(result.timedOut, true)
    assert.ok(elapsed >= 1000 && elapsed < 3000, `SIGKILL about 1 s after the timeout (took ${elapsed} ms)`)
    const grandchild = Number(readFileSync(path.join(tmp, 'stubborn.pid'), 'utf8'))
    assert.ok(await eventually(() => !alive(grandchild), 1000), `grandchild ${grandchild} is dead`)
  })
})

describe('environment variables', { timeout: 20000 }, () => {
  it('should use configured env vars, overridden by execution env', async () => {
    const envSandbox = make({ workingDirectory: tmp, env: { PATH: process.env.PATH, CONFIGURED_VAR: 'configured-value', OVERRIDE_VAR: 'original' } })
    await envSandbox._start()
    const result = await envSandbox.executeCommand('printenv', ['CONFIGURED_VAR'])
    assert.equal(result.stdout.trim(), 'configured-value')
    const over = await envSandbox.executeCommand('printenv', ['OVERRIDE_VAR'], { env: { OVERRIDE_VAR: 'overridden' } })
    assert.equal(over.stdout.trim(), 'overridden')
  })

  it('should not inherit process.env by default', async () => {
    const testVarName = `MASTRA_TEST_VAR_${Date.now()}`
    process.env[testVarName] = 'should-not-be-inherited'
    try {
      const isolated = make({ workingDirectory: tmp, env: { PATH: process.env.PATH } })
      await isolated._start()
      const result = await isolated.executeCommand('printenv', [testVarName])
      assert.equal(result.success, false)
      assert.equal(result.stdout, '')
      // the whole environment is exactly PATH (+ what the shell itself adds: PWD)
      const env = await isolated.executeCommand('env')
      const names = env.stdout.trim().split('\n').map((l) => l.split('=')[0]).filter((n) => n !== 'PWD')
      assert.deepEqual(names, ['PATH'])
    } finally {
      delete process.env[testVarName]
    }
  })

  it('should include process.env when explicitly spread', async () => {
    const testVarName = `MASTRA_TEST_VAR_${Date.now()}`
    process.env[testVarName] = 'should-be-included'
    try {
      const full = make({ workingDirectory: tmp, env: { ...process.env } })
      await full._start()
      const result = await full.executeCommand('printenv', [testVarName])
      assert.equal(result.success, true)
      assert.equal(result.stdout.trim(), 'should-be-included')
    } finally {
      delete process.env[testVarName]
    }
  })
})

describe('isolation', { timeout: 20000 }, () => {
  it('runs the argv of wrapCommandForIsolation() without a shell', async () => {
    // A stand-in backend: the wrapper's argv reaches exec as is (no expansion, no word splitting).
    sandbox.isolation = 'bwrap'
    const seen = []
    sandbox.wrapCommandForIsolation = (command) => {
      seen.push(command)
      return { command: 'printf', args: ['[%s]', command, '$HOME', "it's", 'a  b', '*'] }
    }
    const result = await sandbox.executeCommand('echo', ['hi there'])
    assert.deepEqual(seen, ["echo 'hi there'"])
    assert.equal(result.stdout, `[echo 'hi there'][$HOME][it's][a  b][*]`)
    assert.equal(result.command, "echo 'hi there'")

    sandbox.wrapCommandForIsolation = () => ({ command: 'definitely-not-a-wrapper-xyz', args: [] })
    await assert.rejects(sandbox.processes.spawn('true'), /definitely-not-a-wrapper-xyz|ENOENT|not found/i)
    assert.deepEqual(await sandbox.processes.list(), [])
  })

  it('real bubblewrap isolation', { skip: !isIsolationAvailable('bwrap') && 'bwrap is not available on this machine' }, async () => {
    const isolated = make({ workingDirectory: tmp, isolation: 'bwrap', env: { PATH: process.env.PATH } })
    const result = await isolated.executeCommand('sh', ['-c', 'echo inside > inside.txt; cat inside.txt'])
    assert.equal(result.exitCode, 0)
    assert.equal(result.stdout, 'inside\n')
  })
})

describe('beyond Mastra', { timeout: 20000 }, () => {
  it('no child outlives the Node process (Mastra spawns detached, so its children would)', async () => {
    const script = `
      import { NativeLocalSandbox } from ${JSON.stringify(path.join(ROOT, 'mastra/index.mjs'))}
      const sb = new NativeLocalSandbox({ workingDirectory: ${JSON.stringify(tmp)} })
      let out = ''
      const h = await sb.processes.spawn('sleep 30 & echo $!; sleep 30', { onStdout: (d) => { out += d } })
      while (!out.includes('\\n')) await new Promise((r) => setTimeout(r, 5))
      console.log(h.pid, out.trim())
      process.exit(0)
    `
    const stdout = await new Promise((resolve, reject) => {
      execFile(process.execPath, ['--input-type=module', '-e', script], { cwd: ROOT, timeout: 20000 }, (err, out, errOut) =>
        err ? reject(new Error(`${err.message}\n${errOut}`)) : resolve(out),
      )
    })
    const pids = stdout.trim().split(/\s+/).map(Number)
    assert.equal(pids.length, 2)
    assert.ok(pids.every((p) => p > 0))
    assert.ok(await eventually(() => pids.every((p) => !alive(p)), 2000), `processes ${pids} died with their Node process`)
  })

  it('handle.kill() reaches the whole group; a second kill and kill after exit are harmless', async () => {
    const c = collector(/^(\d+)$/m)
    const h = await sandbox.processes.spawn('sleep 30 & echo $!; wait', { onStdout: c.onData })
    const grandchild = Number((await c.matched)[1])
    assert.equal(await h.kill(), true)
    await h.kill()
    const r = await h.wait()
    assert.equal(r.exitCode, 128)
    assert.equal(r.killed, true)
    assert.equal(r.timedOut, false)
    assert.equal(await h.kill(), false)
    assert.ok(await eventually(() => !alive(grandchild), 1000))
  })

  it("stdinMode 'ignore': the child sees EOF, sendStdin/closeStdin reject mentioning stdin", async () => {
    // The sleep keeps the process running past the early call: a child that ends at once can
    // be over by the time its handle arrives, and then "already exited" is the answer.
    const h = await sandbox.processes.spawn('cat; sleep 0.2; echo after-eof', { stdinMode: 'ignore' })
    const early = h.sendStdin('x')
    await assert.rejects(early, /stdin/)
    const r = await h.wait()
    assert.equal(r.stdout, 'after-eof\n')
    await assert.rejects(h.sendStdin('late'), new RegExp(`Process ${h.pid} has already exited with code 0`))
  })

  it('ordered repeated stdin writes (line-framed JSON over stdout, replies through sendStdin)', async () => {
    const script = "process.stdin.setEncoding('utf8');let b='';process.stdin.on('data',d=>{b+=d;let i;while((i=b.indexOf('\\n'))>=0){const m=JSON.parse(b.slice(0,i));b=b.slice(i+1);process.stdout.write(JSON.stringify({id:m.id,sq:m.n*m.n})+'\\n')}})"
    const replies = []
    let pending = ''
    const h = await sandbox.processes.spawn(`node -e "${script}"`, {
      onStdout: (d) => {
        pending += d
        let i
        while ((i = pending.indexOf('\n')) >= 0) {
          replies.push(JSON.parse(pending.slice(0, i)))
          pending = pending.slice(i + 1)
        }
      },
    })
    for (let n = 0; n < 200; n++) await h.sendStdin(JSON.stringify({ id: n, n }) + '\n')
    await h.closeStdin()
    const r = await h.wait()
    assert.equal(r.exitCode, 0)
    assert.deepEqual(replies, Array.from({ length: 200 }, (_, n) => ({ id: n, sq: n * n })))
  })

  it('stdin operations made without awaiting reach the pipe in call order', async () => {
    const h = await sandbox.processes.spawn('cat')
    const ops = []
    for (let i = 0; i < 50; i++) ops.push(h.sendStdin(`${i},`))
    ops.push(h.closeStdin())
    await Promise.all(ops)
    const r = await h.wait()
    assert.equal(r.stdout, Array.from({ length: 50 }, (_, i) => `${i},`).join(''))
  })

  it('the procvisor handle underneath is reachable (waitForLog)', async () => {
    const h = await sandbox.processes.spawn('sleep 0.1; echo ready; sleep 30')
    await h.nativeHandle.waitForLog(/ready/, { timeout: 5000 })
    assert.ok(await eventually(() => h.stdout.includes('ready'), 2000))
    assert.equal(await sandbox.processes.kill(h.pid), true)
  })
})
