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

/**
 * A request URL with its write keys replaced: the segment after `projects` in the path
 * (`/v1/projects/KEY/settings`) and every `writeKey` query parameter. Names are compared as the
 * router and the query-string parser read them, percent-decoded (and `+` as a space) and in any
 * case, so `?write%4Bey=KEY` or `/v1/%70rojects/KEY/…` are redacted like the documented spelling.
 */
export function withoutWriteKeys(url: string): string {
  // Every logged request passes here: most URLs (/v1/batch) cannot hold a key in any spelling.
  if (!MAY_HOLD_A_KEY.test(url)) return url
  const queryAt = url.indexOf('?')
  const path = queryAt < 0 ? url : url.slice(0, queryAt)
  const segments = path.split('/')
  for (let i = 0; i < segments.length - 1; i++) {
    if (decoded(segments[i]!).toLowerCase() === 'projects' && segments[i + 1] !== '') {
      segments[i + 1] = REDACTED
    }
  }
  if (queryAt < 0) return segments.join('/')
  const query = url
    .slice(queryAt + 1)
    .split('&')
    .map((pair) => {
      const equals = pair.indexOf('=')
      const name = equals < 0 ? pair : pair.slice(0, equals)
      return decoded(name).trim().toLowerCase() === 'writekey' ? `${name}=${REDACTED}` : pair
    })
  return `${segments.join('/')}?${query.join('&')}`
}

const REDACTED = '[redacted]'
const MAY_HOLD_A_KEY = /[%+]|projects|writekey/i

/** Percent-decoded, `+` read as a space; text that does not decode is compared as it is. */
function decoded(text: string): string {
  try {
    return decodeURIComponent(text.replaceAll('+', ' '))
  } catch {
    return text
  }
}
