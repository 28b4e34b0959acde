'use strict'
// The README's Install section is what a new user types: it must say the package is not on the
// registry yet, name the tarballs `npm run package` writes for this version, and say which Node
// each face needs and what `npm test` costs.
const test = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')

const root = path.join(__dirname, '..')
const readme = fs.readFileSync(path.join(root, 'README.md'), 'utf8')
const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'))
const install = readme.slice(readme.indexOf('## Install'), readme.indexOf('\n## ', readme.indexOf('## Install') + 1))

test('Install says the package is unpublished and installs both tarballs of this version in one command', () => {
  assert.match(install, /not on the npm registry yet/)
  const line = install.split('\n').find((l) => l.startsWith('npm install /path/to/procvisor/dist/'))
  assert.ok(line, 'a literal install command for the tarballs')
  assert.ok(line.includes(`dist/${pkg.name}-${pkg.version}.tgz`), line)
  assert.ok(line.includes(`dist/${pkg.name}-linux-x64-gnu-${pkg.version}.tgz`), line)
})

test('the README says which Node each face needs and what npm test costs', () => {
  assert.match(install, /Node ≥ 20/)
  assert.match(install, /Node ≥ 22\.13/)
  assert.match(readme, /about\s+9 minutes on 2 cores/)
})
