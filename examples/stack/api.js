// An HTTP API that needs the database: it checks the database's port before it listens.
const note = require('./note')('api', 'SIGINT')
require('node:net')
  .connect(47011, '127.0.0.1', () => {
    note('db-answered')
    require('node:http').createServer((req, res) => res.end(req.url === '/health' ? 'healthy' : 'api')).listen(47012, '127.0.0.1', () => console.log('api listening on 47012'))
  })
  .on('error', (e) => {
    console.error(`no database: ${e.message}`)
    process.exit(1)
  })
