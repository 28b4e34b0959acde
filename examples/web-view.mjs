// examples/web-view.mjs: a page of this app's processes and terminals, on 127.0.0.1, behind a token.
import { ProcessManager, createWebView } from 'procvisor'

const pm = new ProcessManager()
await pm.spawn('while true; do date; sleep 1; done') // a log to watch live
const shell = await pm.createTerminal({ command: ['bash', '--norc', '-i'] })

const view = await createWebView({ managers: [pm] }) // also sandboxes: [sandbox]; port: a free one
console.log(view.url) // http://127.0.0.1:41234/?token=…: open it in a browser

// What the browser does: the first request with the token gets the cookie, then every page needs it.
const first = await fetch(view.url, { redirect: 'manual' })
const cookie = first.headers.get('set-cookie').split(';')[0] // HttpOnly, SameSite=Strict
const index = await (await fetch(new URL('/', view.url), { headers: { cookie } })).text()
console.log(first.status, index.includes(shell.id) ? 'the page lists the terminal' : 'the terminal is missing')
console.log((await fetch(new URL('/', view.url))).status, 'without the token')

// In a server of the app's own (the `ws` package): wss.on('connection', (ws) => shell.connect(ws))
await view.close() // the server goes; the processes would run on
await pm.close()
