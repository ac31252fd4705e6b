import { ConflictError, NotFoundError, ValidationError } from './errors.ts'

/**
 * Computed traits: one value per profile, computed from the profile's calls of one event (filtered by
 * `where`, optionally only the last `withinDays` days), kept current as calls arrive and synced to
 * destinations as identify calls whenever the value changes.
 */

export const COMPUTED_TRAIT_KINDS = [
  'count',
  'sum',
  'avg',
  'min',
  'max',
  'first',
  'last',
  'most_frequent',
  'unique_list',
  'unique_list_count',
] as const
export type ComputedTraitKind = (typeof COMPUTED_TRAIT_KINDS)[number]

/** Kinds that read a property (every kind but `count`); the first five need its values to be numbers. */
export const NUMERIC_KINDS: readonly ComputedTraitKind[] = ['sum', 'avg', 'min', 'max']

export const WHERE_OPERATORS = [
  '=',
  '!=',
  '<',
  '<=',
  '>',
  '>=',
  'contains',
  'starts_with',
  'ends_with',
  'exists',
  'not_exists',
  'in',
] as const
export type WhereOperator = (typeof WHERE_OPERATORS)[number]

/** One filter on an event's properties. `property` may be a dotted path (`address.city`). */
export interface WhereCondition {
  property: string
  op: WhereOperator
  /** Absent for `exists` / `not_exists`; an array for `in`. */
  value?: unknown
}

/** The longest window a definition may ask for. */
export const MAX_WITHIN_DAYS = 3_650

/**
 * `computing` while values (memberships) over existing history are being computed, then `live`;
 * `disabled` when switched off (neither evaluated nor synced); `failed` when an evaluation threw (see
 * `error`) — the others go on.
 */
export type ComputationStatus = 'computing' | 'live' | 'disabled' | 'failed'

export interface ComputedTrait {
  id: string
  name: string
  /** The snake_cased name at creation: the trait name receivers get. Never changes. */
  key: string
  kind: ComputedTraitKind
  event: string
  property: string | null
  where: WhereCondition[]
  withinDays: number | null
  destinationIds: string[]
  /** `computing` while the values over existing history are being computed, then `live`. */
  status: ComputationStatus
  /** Why it failed (status `failed`), else null. */
  error: string | null
  createdAt: number
  updatedAt: number
}

/** `"Orders Last 30 Days"` → `orders_last_30_days`; `"Big Spenders!"` → `big_spenders`. */
export function snakeCase(name: string): string {
  return name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_')
    .replace(/^_+|_+$/g, '')
}

/** Checks a where list; `at` is the JSON pointer of the list in the request (for the 400). */
export function checkWhere(where: WhereCondition[], at: string): void {
  where.forEach((condition, index) => {
    // The management API's schema already says so for computed traits; audience trees arrive unchecked.
    if (typeof condition.property !== 'string' || condition.property === '') {
      throw new ValidationError(
        `${at}/${index}/property`,
        'Each where condition names the call property it filters on: give "property" (a dotted path reads nested ones).',
      )
    }
    checkCondition(condition, `${at}/${index}`)
  })
}

/** Checks one condition's `op` and `value`; `at` is the pointer of the object holding them. */
export function checkCondition(condition: { op: unknown; value?: unknown }, at: string): void {
  if (!(WHERE_OPERATORS as readonly unknown[]).includes(condition.op)) {
    throw new ValidationError(
      `${at}/op`,
      `${JSON.stringify(condition.op)} is not an operator; use one of ${WHERE_OPERATORS.join(', ')}.`,
    )
  }
  const needsValue = condition.op !== 'exists' && condition.op !== 'not_exists'
  if (needsValue && condition.value === undefined) {
    throw new ValidationError(
      `${at}/value`,
      `The operator "${String(condition.op)}" compares with a value: give "value".`,
    )
  }
  if (condition.op === 'in' && !Array.isArray(condition.value)) {
    throw new ValidationError(
      `${at}/value`,
      'The operator "in" takes a list of values, e.g. ["pro", "team"].',
    )
  }
}

export function computedTraitNotFound(id: string): NotFoundError {
  return new NotFoundError(
    'computed_trait_not_found',
    `No computed trait has id "${id}". List them with GET /api/v1/computed-traits.`,
  )
}

export function computedKeyTaken(key: string): ConflictError {
  return new ConflictError(
    'computed_key_taken',
    `A computed trait or audience already uses the key "${key}" (the snake_cased name). Choose another name.`,
  )
}
