import { type Logger, pino } from 'pino'

export type { Logger }

/**
 * Structured JSON logs on stdout. `sharedSecret` and auth headers are redacted wherever they appear,
 * and so are write keys in logged request URLs (the browser SDKs' settings paths and beacon query).
 */
export function createLogger(level: string): Logger {
  return pino({
    level,
    base: { service: 'sluice' },
    serializers: { req: serializeRequest },
    redact: {
      paths: [
        'sharedSecret',
        '*.sharedSecret',
        '*.*.sharedSecret',
        'req.headers.authorization',
        'headers.authorization',
      ],
      censor: '[redacted]',
    },
  })
}

/** What a request log line shows of a request: Fastify's default members, its URL without write keys. */
function serializeRequest(request: {
  method?: string
  url?: string
  host?: string
  ip?: string
  socket?: { remotePort?: number }
}) {
  return {
    method: request.method,
    url: request.url === undefined ? undefined : withoutWriteKeys(request.url),
    host: request.host,
    remoteAddress: request.ip,
    remotePort: request.socket?.remotePort,
  }
}

/** `/v1/projects/KEY/settings` and `?writeKey=KEY` with the key replaced. */
export function withoutWriteKeys(url: string): string {
  return url
    .replace(/^(\/v1\/projects\/)[^/?#]+/, '$1[redacted]')
    .replace(/([?&]writeKey=)[^&#]*/gi, '$1[redacted]')
}
