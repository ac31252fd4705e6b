/**
 * Clearer answers for requests Fastify refuses before our code runs (no JSON body, broken JSON),
 * for the management API only. Everything else passes on to the server's error handler unchanged.
 */
import { HttpError } from '../lib/errors.ts'

export function rephraseRequestError(error: unknown): unknown {
  const code = (error as { code?: unknown } | null)?.code
  switch (code) {
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new HttpError(
        415,
        'unsupported_media_type',
        'The management API accepts JSON only; send the body with "Content-Type: application/json".',
      )
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new HttpError(
        400,
        'empty_body',
        'The body is empty but Content-Type says JSON; send a JSON object, or drop the Content-Type header when there is no body.',
      )
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return invalidJson()
  }
  // Fastify's JSON parser reports broken JSON as a SyntaxError with status 400.
  if (error instanceof SyntaxError && (error as { statusCode?: number }).statusCode === 400)
    return invalidJson(error.message)
  return error
}

function invalidJson(detail?: string): HttpError {
  const why = detail === undefined ? '' : ` (${detail})`
  return new HttpError(400, 'invalid_json', `The body is not valid JSON${why}; send a JSON object.`)
}
