/**
 * Turns request-schema failures into errors that name the field and say how to fix it.
 *
 * Fastify's default Ajv is lenient in two ways a management API should not be: it silently strips
 * properties a schema forbids (`removeAdditional`), so a typo such as `"enabeld": false` would be
 * ignored, and it coerces scalars (`"enabled": 0` becomes false, `"name": null` becomes "").
 * `checkBodyStrictly` runs before Ajv and refuses both with a message naming the field; Ajv then
 * checks the remaining rules (lengths, counts, enums) on values that already have the right types.
 * `checkQueryStrictly` does the same for query parameters a route does not know (`?stauts=failed`
 * must not silently mean "no filter").
 */
import type { FastifyRequest, FastifySchemaValidationError } from 'fastify'
import { MAX_JSON_DEPTH } from '../domain/definition-limits.ts'
import { ValidationError } from '../domain/errors.ts'
import { HttpError } from '../lib/errors.ts'
import { nestedDeeperThan } from '../lib/json-depth.ts'
import { escapePointerToken, fieldLabel } from '../lib/json-pointer.ts'
import { thousands } from '../lib/thousands.ts'

/** Which part of the request failed: Fastify's `SchemaErrorDataVar`, which it does not export. */
type RequestPart = 'body' | 'headers' | 'params' | 'querystring'

/** The JSON Schema keywords the strict check reads. */
interface SchemaShape {
  type?: string | readonly string[]
  properties?: Record<string, unknown>
  additionalProperties?: unknown
  items?: unknown
}

/**
 * A `preValidation` hook, the first: refuses a body nested deeper than any management request needs
 * (audience definitions included), before any recursive walk of it (the checks below, the domain's,
 * the store's serialization) could run out of stack on a hostile one.
 */
export async function checkBodyDepth(request: FastifyRequest): Promise<void> {
  if (nestedDeeperThan(request.body, MAX_JSON_DEPTH)) {
    throw new HttpError(
      400,
      'validation_failed',
      `The request body is nested more than ${MAX_JSON_DEPTH} levels deep (objects and arrays inside each other); no management request needs that many. Flatten it.`,
    )
  }
}

/** A `preValidation` hook: refuses body members of the wrong JSON type, or not declared by the schema. */
export async function checkBodyStrictly(request: FastifyRequest): Promise<void> {
  const schema = request.routeOptions.schema?.body
  if (schema !== undefined) checkStrictly(schema, request.body, '')
}

/**
 * A `preValidation` hook: refuses query parameters the route's querystring schema does not declare,
 * and whole-number parameters that are not plain digits within their range.
 */
export async function checkQueryStrictly(request: FastifyRequest): Promise<void> {
  const schema = request.routeOptions.schema?.querystring as SchemaShape | undefined
  if (schema === undefined) return
  const properties = schema.properties ?? {}
  const allowed = Object.keys(properties)
  for (const [key, value] of Object.entries(request.query as Record<string, unknown>)) {
    if (!Object.hasOwn(properties, key)) {
      if (schema.additionalProperties !== false) continue
      throw new HttpError(
        400,
        'validation_failed',
        `Unknown query parameter "${key}"; allowed: ${allowed.join(', ')}. Check the spelling.`,
      )
    }
    const property = properties[key] as NumberShape
    if (property.type === 'integer') checkWholeNumber(key, value, property)
  }
}

/** The keywords of a whole-number query parameter (`wholeNumberQuery` in common-schemas.ts). */
interface NumberShape {
  type?: unknown
  minimum?: number
  maximum?: number
}

/**
 * A whole-number query parameter as written in the URL: decimal digits only, within its range. Ajv
 * alone would coerce "Infinity", "1e309", "0x10" and " 5" into numbers (and then skip the range
 * check for an infinite one), so the raw text is checked first.
 */
function checkWholeNumber(name: string, raw: unknown, { minimum = 0, maximum }: NumberShape): void {
  const value = typeof raw === 'string' && /^\d{1,16}$/.test(raw) ? Number(raw) : Number.NaN
  if (value >= minimum && (maximum === undefined || value <= maximum)) return
  const range =
    maximum === undefined ? `${minimum} or more` : `from ${thousands(minimum)} to ${thousands(maximum)}`
  const got = Array.isArray(raw) ? 'it several times; give it once' : `"${String(raw).slice(0, 40)}"`
  throw new HttpError(
    400,
    'validation_failed',
    `The query parameter "${name}" must be a whole number ${range}, written in digits; got ${got}.`,
  )
}

function checkStrictly(schema: unknown, value: unknown, pointer: string): void {
  if (typeof schema !== 'object' || schema === null) return
  const shape = schema as SchemaShape
  if (shape.type !== undefined && !hasJsonType(value, shape.type)) {
    const subject = pointer === '' ? 'The request body' : fieldLabel(pointer)
    const hint = pointer === '' ? ' Send it with "Content-Type: application/json".' : ''
    const message = `${subject} must be ${describeTypes(shape.type)}.${hint}`
    throw pointer === ''
      ? new HttpError(400, 'validation_failed', message)
      : new ValidationError(pointer, message)
  }
  if (Array.isArray(value)) {
    value.forEach((item, index) => {
      checkStrictly(shape.items, item, `${pointer}/${index}`)
    })
    return
  }
  if (typeof value !== 'object' || value === null) return
  const properties = shape.properties ?? {}
  for (const [key, member] of Object.entries(value)) {
    const memberPointer = `${pointer}/${escapePointerToken(key)}`
    if (Object.hasOwn(properties, key)) {
      checkStrictly(properties[key], member, memberPointer)
    } else if (shape.additionalProperties === false) {
      const where = pointer === '' ? 'the request body' : fieldLabel(pointer)
      const allowed = Object.keys(properties).join(', ')
      throw new ValidationError(
        memberPointer,
        `Unknown property "${key}" in ${where}; allowed: ${allowed}. Check the spelling.`,
      )
    } else {
      checkStrictly(shape.additionalProperties, member, memberPointer)
    }
  }
}

function hasJsonType(value: unknown, type: string | readonly string[]): boolean {
  const types: readonly string[] = typeof type === 'string' ? [type] : type
  return types.some((name) => {
    switch (name) {
      case 'null':
        return value === null
      case 'array':
        return Array.isArray(value)
      case 'object':
        return typeof value === 'object' && value !== null && !Array.isArray(value)
      case 'integer':
        return Number.isInteger(value)
      default:
        return typeof value === name
    }
  })
}

/** Installed with `setSchemaErrorFormatter`: Ajv's first error, rephrased for a person. */
export function formatSchemaError(errors: FastifySchemaValidationError[], dataVar: RequestPart): Error {
  const error = errors[0]
  if (error === undefined) {
    return new HttpError(400, 'validation_failed', `The request ${dataVar} is invalid.`)
  }
  const pointer =
    error.keyword === 'required'
      ? `${error.instancePath}/${String(error.params.missingProperty)}`
      : error.instancePath
  const subject =
    pointer === ''
      ? `The request ${dataVar}`
      : dataVar === 'querystring'
        ? `The query parameter "${fieldLabel(pointer)}"`
        : dataVar === 'params'
          ? `The path parameter "${fieldLabel(pointer)}"`
          : fieldLabel(pointer)
  const hint = dataVar === 'body' && pointer === '' ? ' Send it with "Content-Type: application/json".' : ''
  const message = `${subject} ${describeRule(error)}${hint}`
  // The field is only meaningful within the body; for the URL or headers the message says it all.
  return dataVar === 'body' && pointer !== ''
    ? new ValidationError(pointer, message)
    : new HttpError(400, 'validation_failed', message)
}

function describeRule(error: FastifySchemaValidationError): string {
  const { params } = error
  switch (error.keyword) {
    case 'required':
      return 'is required; add it.'
    case 'type':
      return `must be ${describeTypes(params.type)}.`
    case 'minLength':
      return params.limit === 1 ? 'must not be empty.' : `must be at least ${params.limit} characters long.`
    case 'minimum':
      return `must be at least ${params.limit}.`
    case 'maximum':
      return `must be at most ${params.limit}.`
    case 'maxLength':
      return `is too long; at most ${params.limit} characters are allowed.`
    case 'minItems':
      return `must have at least ${params.limit} ${params.limit === 1 ? 'entry' : 'entries'}.`
    case 'maxItems':
      return `has too many entries; at most ${params.limit} are allowed.`
    case 'maxProperties':
      return `has too many members; at most ${params.limit} are allowed.`
    case 'uniqueItems':
      return `lists the same value twice (entries ${params.j} and ${params.i}); list each once.`
    case 'enum':
      return `must be one of: ${(params.allowedValues as unknown[]).map((value) => JSON.stringify(value)).join(', ')}.`
    case 'additionalProperties':
      return `has an unknown property "${String(params.additionalProperty)}"; check the spelling.`
    default:
      return `is invalid: ${error.message ?? error.keyword}.`
  }
}

function describeTypes(type: unknown): string {
  // Ajv reports several types as "string,null"; a schema holds them as an array.
  const names: Record<string, string> = {
    string: 'a string',
    boolean: 'a boolean (true or false)',
    object: 'a JSON object',
    array: 'an array',
    integer: 'a whole number',
    number: 'a number',
    null: 'null',
  }
  const types = (Array.isArray(type) ? type.join(',') : String(type)).split(',')
  return types.map((name) => names[name] ?? name).join(' or ')
}
