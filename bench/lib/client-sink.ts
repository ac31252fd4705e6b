// The client benchmark's sink: a lean HTTP server answering every POST with {"success":true},
// counting the messageIds it receives to detect duplicates and losses. GET /stats reports the
// counts, POST /reset clears them. Prints its port on stdout.
import { createServer } from 'node:http'

const answer = Buffer.from('{"success":true}')
let seen = new Set<string>()
let received = 0
let requests = 0

const server = createServer((request, response) => {
  const chunks: Buffer[] = []
  request.on('data', (chunk: Buffer) => chunks.push(chunk))
  request.on('end', () => {
    if (request.method === 'GET' && request.url === '/stats') {
      response.end(JSON.stringify({ requests, received, unique: seen.size }))
      return
    }
    if (request.method === 'POST' && request.url === '/reset') {
      seen = new Set()
      received = 0
      requests = 0
      response.end('{}')
      return
    }
    requests++
    const { batch } = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { batch: { messageId: string }[] }
    for (const message of batch) {
      received++
      seen.add(message.messageId)
    }
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
