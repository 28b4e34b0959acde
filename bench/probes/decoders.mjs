// Probe: how fast Node turns output Buffers into strings, per decoder and chunk size.
//   node bench/probes/decoders.mjs
// (The listener pump decodes in Rust, src/core/output/decoder.rs; waitForLog uses StringDecoder. This probe
// is what chose them: see bench/ANALYSIS.md, §5.)
import { StringDecoder } from 'node:string_decoder'
import { performance } from 'node:perf_hooks'

const TOTAL = 256 * 1024 * 1024
for (const size of [64 * 1024, 1024 * 1024]) {
  const b = Buffer.from('log line 123456\n'.repeat(size / 16))
  const n = TOTAL / size
  const run = (name, make) => {
    const decode = make()
    const t = performance.now()
    let chars = 0
    for (let i = 0; i < n; i++) chars += decode(b).length
    const mbps = TOTAL / 1e6 / ((performance.now() - t) / 1000)
    console.log(`${String(size / 1024).padStart(5)} KiB chunks  ${name.padEnd(28)} ${mbps.toFixed(0).padStart(6)} MB/s`)
  }
  run('TextDecoder {stream: true}', () => {
    const d = new TextDecoder('utf-8')
    return (x) => d.decode(x, { stream: true })
  })
  run('StringDecoder.write', () => {
    const d = new StringDecoder('utf8')
    return (x) => d.write(x)
  })
  run("buffer.toString('utf8')", () => (x) => x.toString('utf8'))
}
