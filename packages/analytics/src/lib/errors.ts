/**
 * A call or option that can never succeed, thrown at the call so the stack points at the mistake.
 * `field` is a path into the argument, such as `.event`, `.properties` or `.` for the whole message.
 */
export class ValidationError extends Error {
  readonly field: string

  constructor(field: string, message: string) {
    super(message)
    this.name = 'ValidationError'
    this.field = field
  }
}

/** A call made after `close()`: the message was not queued. */
export class ClosedError extends Error {
  constructor(call: string) {
    super(
      `${call}() was called after close(); the message was not queued. Create a new Analytics to send more.`,
    )
    this.name = 'ClosedError'
  }
}

/**
 * Why messages were not delivered:
 * - `http`: the server answered with an error status (`status` says which);
 * - `network`: no answer (connection refused, reset, DNS…);
 * - `timeout`: no complete answer within the `timeout` option;
 * - `rejected`: the server accepted the batch but refused this message (partial acceptance);
 * - `closed`: `close()` ran out of time before the batch could be sent or retried.
 */
export type DeliveryErrorKind = 'http' | 'network' | 'timeout' | 'rejected' | 'closed'

export interface DeliveryErrorDetails {
  status?: number | undefined
  retryable?: boolean | undefined
  cause?: unknown
}

export class DeliveryError extends Error {
  readonly kind: DeliveryErrorKind
  /** HTTP status, when the server answered. */
  readonly status: number | undefined
  /** Whether the library retries (or would have retried) this failure. */
  readonly retryable: boolean

  constructor(kind: DeliveryErrorKind, message: string, details: DeliveryErrorDetails = {}) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause })
    this.name = 'DeliveryError'
    this.kind = kind
    this.status = details.status
    this.retryable = details.retryable ?? false
  }
}

/** Why a batch was given up on when `close()` ran out of time; `last` is the failure before, if any. */
export function closedError(last?: DeliveryError): DeliveryError {
  return new DeliveryError('closed', 'close() timed out before the batch was delivered', { cause: last })
}
