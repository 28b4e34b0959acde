// A language server through NativeLocalSandbox, on both procvisor backends:
// typescript-language-server --stdio spawned with sandbox.processes.spawn and driven by
// vscode-jsonrpc over handle.reader / handle.writer (how Mastra's LSP client talks to it), then
// Mastra's own LSP stack (Workspace `lsp`) on top of it.
import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import * as fs from 'node:fs/promises'
import { createRequire } from 'node:module'
import * as path from 'node:path'
import { pathToFileURL } from 'node:url'
import { Workspace } from '@mastra/core/workspace'
import { describeBackends, end } from './backends.mjs'
import { ROOT, alive, eventually, tempDir } from './helpers.mjs'

const require = createRequire(import.meta.url)
const { StreamMessageReader, StreamMessageWriter, createMessageConnection } = require('vscode-jsonrpc/node')

const SERVER = path.join(ROOT, 'node_modules/.bin/typescript-language-server')
const TSSERVER = path.join(ROOT, 'node_modules/typescript/lib/tsserver.js')
const SOURCE = 'const n: number = "not a number"\nexport { n }\n'

describeBackends('a language server', ['native', 'persistent'], { timeout: 120000 }, (backend) => {
  let dir
  let sandbox
  before(async () => {
    dir = tempDir('procvisor-lsp-')
    await fs.writeFile(path.join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions: { strict: true, noEmit: true }, include: ['*.ts'] }))
    await fs.writeFile(path.join(dir, 'bad.ts'), SOURCE)
    sandbox = backend.make({ workingDirectory: dir, env: { PATH: process.env.PATH } })
  })
  after(async () => {
    await end(sandbox)
    await fs.rm(dir, { recursive: true, force: true })
  })

  describe('LSP over handle.reader / handle.writer', { timeout: 60000 }, () => {
    it('typescript-language-server answers initialize and publishes diagnostics for a type error', async () => {
      const handle = await sandbox.processes.spawn(`${SERVER} --stdio`, { cwd: dir })
      assert.equal(handle.exitCode, undefined) // Mastra's LSP liveness check
      const connection = createMessageConnection(new StreamMessageReader(handle.reader), new StreamMessageWriter(handle.writer))
      const fileUri = pathToFileURL(path.join(dir, 'bad.ts')).href
      const diagnostics = new Promise((resolve) => {
        connection.onNotification('textDocument/publishDiagnostics', (p) => {
          if (p.uri === fileUri && p.diagnostics.length > 0) resolve(p.diagnostics)
        })
      })
      connection.listen()
      try {
        const init = await connection.sendRequest('initialize', {
          processId: process.pid,
          rootUri: pathToFileURL(dir).href,
          workspaceFolders: [{ name: 'ws', uri: pathToFileURL(dir).href }],
          capabilities: { textDocument: { publishDiagnostics: {} } },
          initializationOptions: { tsserver: { path: TSSERVER, logVerbosity: 'off' } },
        })
        assert.equal(typeof init.capabilities, 'object')
        assert.ok(init.capabilities.textDocumentSync !== undefined)
        assert.ok(init.capabilities.hoverProvider)
        connection.sendNotification('initialized', {})
        connection.sendNotification('textDocument/didOpen', {
          textDocument: { uri: fileUri, languageId: 'typescript', version: 1, text: SOURCE },
        })
        const diags = await diagnostics
        const error = diags.find((d) => d.code === 2322)
        assert.ok(error, `TS2322 among ${JSON.stringify(diags)}`)
        assert.match(error.message, /Type 'string' is not assignable to type 'number'/)
        assert.deepEqual(error.range.start, { line: 0, character: 6 })
        assert.equal(error.severity, 1)

        // A hover round trip after the notifications: the request/response channel still works.
        const hover = await connection.sendRequest('textDocument/hover', { textDocument: { uri: fileUri }, position: { line: 0, character: 6 } })
        assert.match(JSON.stringify(hover.contents), /const n: number/)

        await connection.sendRequest('shutdown')
        connection.sendNotification('exit')
        const result = await handle.wait()
        assert.equal(result.exitCode, 0)
        assert.equal(handle.exitCode, 0)
        // Mastra's tracking: still listed (LSP never releases), pruned on the first get after exit.
        const listed = (await sandbox.processes.list()).find((p) => p.pid === handle.pid)
        assert.deepEqual(listed, { pid: handle.pid, command: `${SERVER} --stdio`, running: false, exitCode: 0 })
        assert.equal(await sandbox.processes.get(handle.pid), handle)
        assert.equal(await sandbox.processes.get(handle.pid), undefined)
      } finally {
        connection.dispose()
        await handle.kill()
      }
    })

    it("Mastra's shutdown path: handle.kill() on a live server ends it and its children", async () => {
      const handle = await sandbox.processes.spawn(`${SERVER} --stdio`, { cwd: dir })
      const connection = createMessageConnection(new StreamMessageReader(handle.reader), new StreamMessageWriter(handle.writer))
      connection.listen()
      await connection.sendRequest('initialize', {
        processId: process.pid,
        rootUri: pathToFileURL(dir).href,
        capabilities: {},
        initializationOptions: { tsserver: { path: TSSERVER, logVerbosity: 'off' } },
      })
      await connection.sendNotification('initialized', {})
      connection.dispose()
      assert.equal(await handle.kill(), true)
      const result = await handle.wait()
      assert.equal(result.exitCode, 128)
      assert.equal(result.killed, true)
      assert.ok(await eventually(() => !alive(Number(handle.pid)), 1000))
    })
  })

  describe("Mastra's LSP client (Workspace lsp) on the sandbox", { timeout: 60000 }, () => {
    it('getDiagnostics reports the type error through sandbox.processes', async () => {
      const spawned = []
      const spawn = sandbox.processes.spawn
      sandbox.processes.spawn = async (...args) => {
        const h = await spawn(...args)
        spawned.push(h)
        return h
      }
      const workspace = new Workspace({
        sandbox,
        lsp: { root: dir, searchPaths: [ROOT], diagnosticTimeout: 15000 },
      })
      try {
        await workspace.init()
        assert.ok(workspace.lsp, 'LSP is available (vscode-jsonrpc and vscode-languageserver-protocol resolve)')
        const diags = await workspace.lsp.getDiagnostics(path.join(dir, 'bad.ts'), SOURCE)
        const error = diags.find((d) => d.severity === 'error')
        assert.ok(error, `an error among ${JSON.stringify(diags)}`)
        assert.equal(error.message, "Type 'string' is not assignable to type 'number'.")
        assert.equal(error.line, 1)
        assert.equal(error.character, 7)
        assert.ok(spawned.length >= 1)
        assert.match(spawned[0].command, /typescript-language-server --stdio/)
      } finally {
        await workspace.lsp?.shutdownAll()
        sandbox.processes.spawn = spawn
      }
      assert.ok(await eventually(() => spawned.every((h) => h.exitCode !== undefined), 3000), 'shutdownAll ended the servers')
    })
  })
})
