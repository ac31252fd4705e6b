/**
 * The webhook receiver `sluice demo` starts on 127.0.0.1: written as a user would write one, it checks
 * each request's `X-Signature` on the raw body with `verifySignature`, then parses it, and answers 401
 * when the signature does not verify.
 */
import type { IncomingHttpHeaders } from 'node:http'
import type { AddressInfo } from 'node:net'
import { verifySignature } from '../deliver/signing.ts'
import { createServer } from '../lib/node-http.ts'

export interface DemoArrival {
  type: string
  messageId: string
  /** Whether `X-Signature` matched the body under the destination's shared secret. */
  signatureVerified: boolean
  /** The delivered JSON as the receiver got it. */
  body: Record<string, unknown>
  headers: IncomingHttpHeaders
}

export interface DemoReceiver {
  url: string
  arrivals: DemoArrival[]
  /** Resolves true once `count` requests arrived, false after `timeoutMs`. */
  waitFor(count: number, timeoutMs: number): Promise<boolean>
  close(): Promise<void>
}

/** A webhook receiver as a user would write one: verify the raw body's signature, then parse it. */
export async function startDemoReceiver(secret: string): Promise<DemoReceiver> {
  const arrivals: DemoArrival[] = []
  const waiters = new Set<() => void>()
  const server = createServer((req, res) => {
    if (req.method !== 'POST' || req.url !== '/webhook') {
      res.writeHead(404).end()
      return
    }
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => chunks.push(chunk))
    req.on('end', () => {
      const raw = Buffer.concat(chunks)
      // Verify the bytes as received, before parsing: re-serialized JSON may differ.
      const signatureVerified = verifySignature(raw, req.headers['x-signature'], secret)
      let body: Record<string, unknown>
      try {
        body = JSON.parse(raw.toString('utf8')) as Record<string, unknown>
      } catch {
        res.writeHead(400).end('not JSON')
        return
      }
      arrivals.push({
        type: String(body.type),
        messageId: String(body.messageId),
        signatureVerified,
        body,
        headers: req.headers,
      })
      for (const wake of waiters) wake()
      res.writeHead(signatureVerified ? 200 : 401, { 'content-type': 'text/plain' })
      res.end(signatureVerified ? 'ok' : 'signature does not verify')
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}/webhook`,
    arrivals,
    waitFor(count, timeoutMs) {
      return new Promise((resolve) => {
        const check = () => {
          if (arrivals.length < count) return
          finish(true)
        }
        const timer = setTimeout(() => finish(false), timeoutMs)
        const finish = (result: boolean) => {
          clearTimeout(timer)
          waiters.delete(check)
          resolve(result)
        }
        waiters.add(check)
        check()
      })
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}
