import { type Logger, pino } from 'pino'

export type { Logger }

/** Structured JSON logs on stdout. `sharedSecret` and auth headers are redacted wherever they appear. */
export function createLogger(level: string): Logger {
  return pino({
    level,
    base: { service: 'sluice' },
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
