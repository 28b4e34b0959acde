// A "database": ready once its port accepts connections.
const note = require('./note')('db', 'SIGTERM')
require('node:net')
  .createServer((socket) => socket.on('error', () => {}).end('ok\n'))
  .listen(47011, '127.0.0.1', () => {
    note('listening')
    console.log('db listening on 47011')
  })
