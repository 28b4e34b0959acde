// A persistent sandbox's supervisor launches on its own JS thread while none of its processes
// runs, and hands launches to its other threads while any does: both ways give the same
// processes, the same output and the same typed errors.
import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import * as path from 'node:path'
import { rejection } from './helpers.mjs'
import { sandboxesPerTest } from './persistent-common.mjs'

const sandboxes = sandboxesPerTest('launch')

/** What a few launches give: output and codes, stdin, and the error of a directory that is missing. */
async function launches(sb, dir) {
  const env = await (await sb.processes.spawn('printf "%s" "$GREETING"', { env: { GREETING: 'hello' } })).wait()
  const code = await (await sb.processes.spawn('echo out; echo err >&2; exit 7')).wait()
  const cat = await sb.processes.spawn('cat')
  await cat.sendStdin('typed\n')
  await cat.closeStdin()
  const echoed = await cat.wait()
  const missing = await rejection(sb.processes.spawn('true', { cwd: path.join(dir, 'missing') }))
  return {
    env: [env.exitCode, env.stdout],
    code: [code.exitCode, code.stdout, code.stderr],
    stdin: [echoed.exitCode, echoed.stdout],
    missing: [missing.name, missing.code, missing.message],
  }
}

describe('launches in a persistent sandbox', () => {
  it('give the same results with no process running as beside a running one', async () => {
    const { sb } = await sandboxes.start()
    const alone = await launches(sb, sandboxes.dir)
    assert.deepEqual(alone.env, [0, 'hello'])
    assert.deepEqual(alone.code, [7, 'out\n', 'err\n'])
    assert.deepEqual(alone.stdin, [0, 'typed\n'])
    assert.equal(alone.missing[0], 'InvalidProcessCwdError', alone.missing.join(': '))
    assert.match(alone.missing[2], /missing/)

    const running = await sb.processes.spawn('sleep 30')
    const beside = await launches(sb, sandboxes.dir)
    assert.equal(running.exitCode, undefined, 'the sleep ran through the second series')
    await sb.processes.kill(running.pid)
    assert.deepEqual(beside, alone)
  })
})
