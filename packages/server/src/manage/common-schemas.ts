/**
 * JSON Schema pieces every management resource uses. The schemas are the single description of the
 * API's shapes: the same objects validate requests, shape responses (Fastify serializes through them,
 * so a property missing here, such as `sharedSecret`, can never be sent), generate the OpenAPI
 * document, and give the TypeScript types (`FromSchema`, and the route type provider).
 */
import type { FromSchema, JSONSchema } from 'json-schema-to-ts'
import { NAME_MAX_LENGTH } from '../domain/names.ts'

/**
 * The type of a response a schema describes. `FromSchema` lets an object have members its schema does
 * not list (`[x: string]: unknown`) unless the schema says `additionalProperties: false`; response
 * schemas do not say it, and the serializer drops such members anyway, so the types leave them out.
 */
export type ResponseShape<Schema extends JSONSchema> = Exact<FromSchema<Schema>>

type Exact<T> = T extends readonly (infer Item)[]
  ? Exact<Item>[]
  : T extends object
    ? { [Key in keyof T as string extends Key ? never : Key]: Exact<T[Key]> }
    : T

export const ADMIN_SECURITY = [{ adminToken: [] }]

/** The name of a source or destination; the domain's `cleanName` holds the same rule. */
export const resourceName = {
  type: 'string',
  minLength: 1,
  maxLength: NAME_MAX_LENGTH,
  description: 'Shown in the UI and logs; surrounding whitespace is removed.',
} as const
/**
 * A whole-number query parameter (a page size, a cursor, a step): every one has both bounds, and
 * `checkQueryStrictly` (request-validation.ts) refuses anything but plain digits within them, naming
 * the parameter and its range, before Ajv coerces the text.
 */
export function wholeNumberQuery<
  const Options extends { minimum: number; maximum: number; default?: number; description: string },
>(options: Options) {
  return { type: 'integer', ...options } as const
}

/** The largest cursor (`before`): ids are positive safe integers. */
export const MAX_CURSOR = Number.MAX_SAFE_INTEGER

export const timestamp = { type: 'string', format: 'date-time' } as const
export const nullableTimestamp = { type: ['string', 'null'], format: 'date-time' } as const

export const errorResponse = {
  description: 'What went wrong and how to fix it.',
  type: 'object',
  required: ['error'],
  properties: {
    error: {
      type: 'object',
      required: ['code', 'message'],
      properties: {
        code: { type: 'string', description: 'Stable machine-readable code, e.g. `validation_failed`.' },
        message: { type: 'string', description: 'Says what was wrong and how to fix it.' },
        field: {
          type: 'string',
          description: 'JSON pointer to the offending input, e.g. `/settings/webhooks/0/url`.',
        },
      },
    },
  },
} as const

export const idParams = {
  type: 'object',
  required: ['id'],
  properties: { id: { type: 'string', description: 'The resource id, e.g. `src_…` or `dst_…`.' } },
} as const

/** An address whose authentication failed too often (auth-throttle.ts), with `Retry-After`. */
const throttled = {
  ...errorResponse,
  description:
    'Too many failed attempts to authenticate from this address; retry after `Retry-After` seconds.',
} as const

/** Responses every route that needs a token can give. */
export const authErrors = { 401: errorResponse, 429: throttled } as const
/** Responses every management route can give besides its success. */
export const commonErrors = { 400: errorResponse, ...authErrors } as const
export const withNotFound = { ...commonErrors, 404: errorResponse } as const

/** The answer of a successful DELETE. */
export const deleted = { description: 'Deleted.', type: 'null' } as const
