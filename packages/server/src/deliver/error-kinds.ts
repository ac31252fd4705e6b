/**
 * Why a request to a webhook URL got no 2xx: the `errorKind` recorded with every attempt, and the
 * words (`errorText`) a user reads next to it. Whether a kind is retried is the retry policy's call
 * (retry-policy.ts), not this file's.
 */
import { STATUS_CODES } from '../lib/node-http.ts'
import { SsrfRefusedError } from './ssrf.ts'

/** Every error kind, in the order the management API documents them. */
export const ERROR_KINDS = [
  'http', // the endpoint answered with a status other than 2xx and 3xx
  'redirect', // 3xx: Sluice never follows redirects
  'timeout', // no response headers within the request timeout
  'connect', // refused, reset, closed or unreachable
  'dns', // the host name did not resolve
  'protocol', // the endpoint answered with something that is not HTTP/1.1
  'tls', // handshake or certificate verification failed; nothing was sent
  'ssrf', // a private, loopback or metadata address, and such destinations are not allowed
  'invalid_url', // not an absolute http(s) URL
  'invalid_request', // a header Sluice cannot send
  'invalid_message', // the stored message cannot be shaped into a delivery
  'unknown', // anything not foreseen above
] as const

export type ErrorKind = (typeof ERROR_KINDS)[number]

export interface AttemptError {
  kind: ErrorKind
  text: string
}

/** The error of an answer with `statusCode`, or undefined for a 2xx (which is no error). */
export function describeStatus(statusCode: number, location: string | undefined): AttemptError | undefined {
  if (statusCode >= 200 && statusCode <= 299) return undefined
  const reason = `HTTP ${statusCode}${STATUS_CODES[statusCode] ? ` ${STATUS_CODES[statusCode]}` : ''}`
  if (statusCode < 300 || statusCode > 399) return { kind: 'http', text: reason }
  // The Location is the endpoint's text: shortened so it cannot bloat the attempt record.
  const target = location?.slice(0, 500)
  return {
    kind: 'redirect',
    text: `${reason}${target ? ` to ${target}` : ''}: Sluice never follows redirects. Configure the final URL instead.`,
  }
}

/** No response headers within the request deadline. */
export function describeTimeout(timeoutMs: number): AttemptError {
  return { kind: 'timeout', text: `No response within ${timeoutMs} ms.` }
}

/** The stored message could not be shaped into a delivery (shape.ts refused it). */
export function describeInvalidMessage(error: unknown): AttemptError {
  const message = error instanceof Error ? error.message : String(error)
  return { kind: 'invalid_message', text: `Sluice could not build the request: ${message}` }
}

/** Node's codes for a certificate that does not verify. */
const CERTIFICATE_CODES = new Set([
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID',
  'CERT_REVOKED',
  'CERT_UNTRUSTED',
  'CERT_REJECTED',
  'CERT_SIGNATURE_FAILURE',
  'INVALID_CA',
  'ERR_TLS_CERT_ALTNAME_INVALID',
])
const CONNECTION_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'EPIPE',
  'EHOSTUNREACH',
  'EHOSTDOWN',
  'ENETUNREACH',
  'ENETDOWN',
  'EADDRNOTAVAIL',
  'UND_ERR_SOCKET', // "other side closed"
  'UND_ERR_CLOSED',
])
const TIMEOUT_CODES = new Set([
  'ETIMEDOUT',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
])
const DNS_CODES = new Set(['ENOTFOUND', 'EAI_AGAIN', 'EAI_FAIL', 'EAI_NODATA', 'ENODATA'])

/**
 * A request that failed before any answer: its kind from the error's code, and what happened in
 * words. `host` (with port) and `hostname` name the endpoint.
 */
export function describeRequestError(
  error: unknown,
  endpoint: { host: string; hostname: string },
  timeoutMs: number,
): AttemptError {
  if (error instanceof SsrfRefusedError) return { kind: 'ssrf', text: error.message }
  const code = errorCode(error)
  // Node appends advice meant for Node users ("try running Node.js with --use-system-ca"): keep the first clause.
  const message = error instanceof Error ? (error.message.split(';')[0] ?? '') : String(error)
  const { host, hostname } = endpoint
  if (
    CERTIFICATE_CODES.has(code) ||
    code.startsWith('ERR_SSL_') ||
    code.startsWith('ERR_TLS_') ||
    code === 'EPROTO'
  ) {
    return {
      kind: 'tls',
      text:
        `TLS handshake with ${host} failed: ${message} (${code}); Sluice refuses to send to HTTPS ` +
        'endpoints whose certificate does not verify, so no request was sent. Use a certificate from a public CA.',
    }
  }
  if (TIMEOUT_CODES.has(code))
    return { kind: 'timeout', text: `No response within ${timeoutMs} ms (${message}).` }
  if (DNS_CODES.has(code)) return { kind: 'dns', text: `Could not resolve ${hostname} (${code}).` }
  if (CONNECTION_CODES.has(code))
    return { kind: 'connect', text: `Connection to ${host} failed: ${message} (${code}).` }
  const name = error instanceof Error ? error.name : ''
  if (
    name === 'HTTPParserError' ||
    code.startsWith('HPE_') ||
    code.startsWith('UND_ERR_RESPONSE') ||
    code === 'UND_ERR_INFO'
  ) {
    return { kind: 'protocol', text: `${host} did not answer with valid HTTP/1.1: ${message} (${code}).` }
  }
  if (code === 'UND_ERR_INVALID_ARG' || code === 'UND_ERR_NOT_SUPPORTED') {
    return { kind: 'invalid_request', text: `Sluice could not build the request: ${message}` }
  }
  return { kind: 'unknown', text: code ? `${message} (${code})` : message }
}

/** The error's code, looking through `AggregateError` (one per address tried) and `cause`. */
function errorCode(error: unknown): string {
  let current: unknown = error
  for (let depth = 0; depth < 4 && typeof current === 'object' && current !== null; depth++) {
    const { code, errors, cause } = current as { code?: unknown; errors?: unknown; cause?: unknown }
    if (typeof code === 'string') return code
    current = Array.isArray(errors) && errors.length > 0 ? errors[0] : cause
  }
  return ''
}
