/**
 * Errors in the form's words (the API's path for a field replaced by the field's label), and what a
 * destination's recent deliveries say about each URL.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { Delivery } from '@sluice/server/api'
import { ApiError, inFormWords } from '../src/api/client.ts'
import { attemptsByUrl } from '../src/model/url-attempts.ts'

test("an error names the field by the form's label, not by the API's path", () => {
  const error = new ApiError(
    400,
    'validation_failed',
    'settings.webhooks[1].url is not an absolute URL; write it in full with http:// or https://.',
    '/settings/webhooks/1/url',
  )
  assert.equal(
    inFormWords(error, 'URL 2'),
    'URL 2 is not an absolute URL; write it in full with http:// or https://.',
  )
  const list = new ApiError(400, 'validation_failed', 'subjectIds must have at least 1 entry.', '/subjectIds')
  assert.equal(inFormWords(list, 'User IDs'), 'User IDs must have at least 1 entry.')
  // No label, or a message that does not name the field: as the API said it.
  assert.equal(inFormWords(list, undefined), list.message)
  const other = new ApiError(400, 'bad', 'Something else went wrong.', '/name')
  assert.equal(inFormWords(other, 'Destination name'), 'Something else went wrong.')
  // A field named by a plain word the sentence uses too: the sentence is left as it is.
  const token = new ApiError(401, 'unauthorized', 'This access token is not valid: it is mistyped.', '/token')
  assert.equal(inFormWords(token, 'Access token'), 'This access token is not valid: it is mistyped.')
  const nested = new ApiError(
    400,
    'validation_failed',
    'The value of settings.webhooks[0].url is not an absolute URL.',
    '/settings/webhooks/0/url',
  )
  assert.equal(inFormWords(nested, 'URL 1'), 'The value of URL 1 is not an absolute URL.')
})

const attempt = (
  url: string,
  statusCode: number | null,
  attemptedAt: string,
  errorText: string | null = null,
) => ({
  attemptedAt,
  url,
  statusCode,
  errorKind: statusCode === null ? 'connect' : statusCode < 300 ? null : 'http',
  errorText,
  latencyMs: 3,
  responseExcerpt: null,
})

test("each URL's attempts and failures, and its last error, from the recent deliveries", () => {
  const deliveries = [
    {
      attempts: [
        attempt('https://a', 200, '2026-01-01T00:00:02Z'),
        attempt('https://b', 503, '2026-01-01T00:00:02Z', 'HTTP 503'),
      ],
    },
    {
      attempts: [
        attempt('https://a', 200, '2026-01-01T00:00:01Z'),
        attempt('https://b', null, '2026-01-01T00:00:01Z', 'refused'),
      ],
    },
    { attempts: [attempt('https://b', 200, '2026-01-01T00:00:00Z')] },
  ] as unknown as Delivery[]
  const byUrl = attemptsByUrl(deliveries)
  assert.deepEqual(byUrl.get('https://a'), {
    attempts: 2,
    failures: 0,
    lastError: null,
    lastAt: '2026-01-01T00:00:02Z',
  })
  assert.deepEqual(byUrl.get('https://b'), {
    attempts: 3,
    failures: 2,
    lastError: 'HTTP 503',
    lastAt: '2026-01-01T00:00:02Z',
  })
})
