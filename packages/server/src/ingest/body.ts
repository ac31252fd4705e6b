import { gunzipSync, inflateSync } from 'node:zlib'
import { HttpError } from '../lib/errors.ts'
import { nestedDeeperThan } from '../lib/json-depth.ts'
import { MAX_REQUEST_BYTES } from './limits.ts'
import { MAX_NESTING_DEPTH } from './validate.ts'

/**
 * Decodes a Tracking API body: optional gzip/deflate, the 500 KB limit measured after decompression,
 * then JSON. Any content type is read as JSON, as browser SDKs send `text/plain` to skip CORS preflight.
 */
export function decodeTrackingBody(raw: Buffer, contentEncoding: string | undefined): unknown {
  const encoding = (contentEncoding ?? 'identity').trim().toLowerCase()
  let body: Buffer
  try {
    if (encoding === 'gzip' || encoding === 'x-gzip')
      body = gunzipSync(raw, { maxOutputLength: MAX_REQUEST_BYTES + 1 })
    else if (encoding === 'deflate') body = inflateSync(raw, { maxOutputLength: MAX_REQUEST_BYTES + 1 })
    else if (encoding === 'identity' || encoding === '') body = raw
    else {
      throw new HttpError(
        415,
        'unsupported_encoding',
        `Content-Encoding "${encoding}" is not supported; send the body uncompressed or with gzip.`,
      )
    }
  } catch (error) {
    if (error instanceof HttpError) throw error
    if ((error as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE')
      throw tooLarge('after decompression')
    throw new HttpError(
      400,
      'invalid_encoding',
      `The body is not valid ${encoding} data: ${(error as Error).message}.`,
    )
  }
  if (body.length > MAX_REQUEST_BYTES) throw tooLarge(encoding === 'identity' ? '' : 'after decompression')
  if (body.length === 0) {
    throw new HttpError(
      400,
      'empty_body',
      'The request body is empty; send a JSON object describing the call.',
    )
  }
  let parsed: unknown
  try {
    parsed = JSON.parse(body.toString('utf8'))
  } catch (error) {
    throw new HttpError(400, 'invalid_json', `The body is not valid JSON: ${(error as Error).message}.`)
  }
  refuseDeepBatchMembers(parsed)
  return parsed
}

/**
 * A batch's top-level `context` and `integrations` are merged into every message, one level down, so
 * they may nest one level less than a message (`MAX_NESTING_DEPTH`). Messages themselves are checked
 * one by one by `validateMessage`, so a too-deep message is rejected alone.
 */
function refuseDeepBatchMembers(body: unknown): void {
  if (body === null || typeof body !== 'object' || !Array.isArray((body as { batch?: unknown }).batch)) return
  for (const member of ['context', 'integrations'] as const) {
    if (nestedDeeperThan((body as Record<string, unknown>)[member], MAX_NESTING_DEPTH - 1)) {
      throw new HttpError(
        400,
        'nested_too_deep',
        `The batch "${member}" is nested more than ${MAX_NESTING_DEPTH - 1} levels deep; it is merged into every message, which may nest at most ${MAX_NESTING_DEPTH} levels. Flatten it.`,
      )
    }
  }
}

export function tooLarge(qualifier: string): HttpError {
  return new HttpError(
    413,
    'body_too_large',
    `The request body is larger than ${MAX_REQUEST_BYTES} bytes (${MAX_REQUEST_BYTES / 1024} KB)${qualifier ? ` ${qualifier}` : ''}; split it into smaller batches.`,
  )
}
