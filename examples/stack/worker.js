// A worker that calls the API.
require('./note')('worker', 'SIGHUP')
setInterval(async () => console.log(`api says ${await (await fetch('http://127.0.0.1:47012/')).text()}`), 1000)
