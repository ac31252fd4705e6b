// A no-op HTTP server: reads each request body whole and answers {"success":true}. It is the
// baseline for "the raw loopback HTTP limit" on this machine. Prints its port on stdout.
// `GET /stats` answers the requests served and this process's CPU time so far, so that a benchmark
// can tell the receiver's share of two shared cores from the sender's.
import { createServer } from 'node:http'

const answer = Buffer.from('{"success":true}')
let requests = 0
const server = createServer((request, response) => {
  if (request.method === 'GET' && request.url === '/stats') {
    const cpu = process.cpuUsage()
    response.end(JSON.stringify({ requests, cpuUs: cpu.user + cpu.system }))
    return
  }
  requests++
  request.on('data', () => {})
  request.on('end', () => {
    response.writeHead(200, { 'content-type': 'application/json', 'content-length': answer.length })
    response.end(answer)
  })
})
server.keepAliveTimeout = 60_000
server.listen(0, '127.0.0.1', () => {
  const address = server.address()
  if (address && typeof address === 'object') process.stdout.write(`${address.port}\n`)
})
process.on('SIGTERM', () => server.close(() => process.exit(0)))
