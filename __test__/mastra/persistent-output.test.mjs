// The output of a persistent sandbox's processes as it reaches the Node processes attached to
// it: in order with the calls that name the processes, as the bytes the processes wrote, and
// whole to a listener however fast it comes.
import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import * as net from 'node:net'
import * as path from 'node:path'
import { createRequire } from 'node:module'
import { freshId } from './persistent-common.mjs'
import { BACKENDS, perTest } from './backends.mjs'

const require = createRequire(import.meta.url)
const protocol = require('../../lib/persistent/wire/protocol.js')
const { FrameReader } = require('../../lib/persistent/wire/reader.js')

// A local sandbox beside a persistent one, each test's own (`make({ persistent: true })`).
const { make } = perTest(BACKENDS.find((b) => b.name === 'native'), {
  prefix: 'procvisor-persistent-output-',
  defaults: (dir) => ({ id: freshId(), workingDirectory: path.join(dir, 'wd'), timeoutMs: 60000 }),
})

describe('the output of a persistent sandbox', () => {
  it('spawn() resolves before any output reaches onStdout or reader, 30 times in a row', async () => {
    const sb = make({ persistent: true })
    await sb.start()
    for (let i = 0; i < 30; i++) {
      const expected = `run ${i}\none\ntwo\n`
      let resolved = false
      let early = ''
      let heard = ''
      const h = await sb.processes.spawn(`printf 'run %s\\n' ${i} && printf 'one\\ntwo\\n'`, {
        onStdout: (d) => {
          if (!resolved) early += d
          heard += d
        },
      })
      resolved = true
      // Mastra's reader sees what is emitted from its creation on: made right after spawn(), it
      // must see everything.
      let read = ''
      h.reader.on('data', (d) => (read += d))
      const ended = new Promise((r) => h.reader.once('end', r))
      const result = await h.wait()
      await ended
      assert.equal(early, '', `run ${i}: output before spawn() resolved`)
      assert.equal(heard, expected, `run ${i}: onStdout`)
      assert.equal(read, expected, `run ${i}: reader`)
      assert.equal(result.stdout, expected)
      sb.processes.release(h.pid)
    }
  })

  it('the bytes a process writes reach a client as they are, and a handle decodes them as a local one does', async () => {
    // Invalid UTF-8, a character cut between two writes, and a NUL.
    const command = "printf '\\377\\376a\\303'; sleep 0.05; printf '\\251\\000z'"
    const local = make()
    await local.start()
    const localResult = await (await local.processes.spawn(command)).wait()

    const sb = make({ persistent: true })
    await sb.start()
    const remoteResult = await (await sb.processes.spawn(command)).wait()
    assert.equal(remoteResult.stdout, localResult.stdout)
    assert.equal(remoteResult.stdout, '\ufffd\ufffda\u00e9\u0000z')

    // A client of the wire gets the bytes themselves, in OUT frames, no text in between.
    const socket = net.connect(sb._runtime.connection().socketPath)
    await new Promise((r) => socket.once('connect', r))
    const frames = new FrameReader()
    const got = []
    let exit
    const done = new Promise((resolve) => {
      socket.on('data', (d) => {
        for (const m of frames.push(d)) {
          if (m.t === 'out') got.push(Buffer.from(m.data))
          if (m.t === 'event' && m.kind === 'exit') {
            exit = m
            resolve()
          }
        }
      })
    })
    socket.write(protocol.encode(protocol.hello()))
    socket.write(protocol.encode({ t: 'call', id: 1, op: 'spawn', args: { command, env: { PATH: process.env.PATH } } }))
    await done
    socket.destroy()
    assert.equal(exit.result.exitCode, 0)
    assert.deepEqual([...Buffer.concat(got)], [0xff, 0xfe, 0x61, 0xc3, 0xa9, 0x00, 0x7a])
  })

  it('32 MiB from a process faster than the socket reach onStdout whole, and the exit after the last byte', async () => {
    const sb = make({ persistent: true })
    await sb.start()
    const size = 32 * 1024 * 1024
    let bytes = 0
    let afterExit = 0
    let exited = false
    const h = await sb.processes.spawn(`head -c ${size} /dev/zero; printf end`, {
      maxRetainedBytes: 0,
      onStdout: (d) => {
        bytes += d.length
        if (exited) afterExit += d.length
      },
    })
    const result = await h.wait()
    exited = true
    assert.equal(result.exitCode, 0)
    assert.equal(bytes, size + 3)
    assert.equal(afterExit, 0)
  })

  it('a quiet call (release) is carried out with no reply, and the calls after it are answered', async () => {
    const sb = make({ persistent: true })
    await sb.start()
    const h = await sb.processes.spawn('true')
    await h.wait()
    const socket = net.connect(sb._runtime.connection().socketPath)
    await new Promise((r) => socket.once('connect', r))
    const frames = new FrameReader()
    const got = []
    let answered
    const listed = new Promise((r) => (answered = r))
    socket.on('data', (d) => {
      for (const m of frames.push(d)) {
        got.push(m)
        if (m.id === 3) answered()
      }
    })
    socket.write(protocol.encode(protocol.hello()))
    socket.write(protocol.encode({ t: 'call', id: 2, op: 'release', args: { pid: h.pid }, quiet: true }))
    socket.write(protocol.encode({ t: 'call', id: 3, op: 'list' }))
    await listed
    socket.destroy()
    assert.deepEqual(got.map((m) => m.t), ['hello', 'reply'])
    assert.deepEqual(got[1].value, [], 'the release was carried out')
  })
})
