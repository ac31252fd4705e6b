/**
 * The `where` filters of computed traits and audience conditions: does one call's properties match?
 * Comparisons are strict about types: `<`-like operators compare two numbers or two strings, anything
 * else does not match. A missing property matches only `!=` and `not_exists`.
 */
import type { WhereCondition } from '../domain/computed-traits.ts'
import { valueAtPath } from '../lib/own-path.ts'

export function matchesAll(properties: Record<string, unknown>, where: readonly WhereCondition[]): boolean {
  return where.every((condition) => matches(valueAtPath(properties, condition.property), condition))
}

function matches(actual: unknown, { op, value }: WhereCondition): boolean {
  switch (op) {
    case 'exists':
      return actual !== undefined && actual !== null
    case 'not_exists':
      return actual === undefined || actual === null
    case '=':
      return same(actual, value)
    case '!=':
      return !same(actual, value)
    case 'in':
      return Array.isArray(value) && value.some((candidate) => same(actual, candidate))
    case 'contains':
      if (Array.isArray(actual)) return actual.some((item) => same(item, value))
      return typeof actual === 'string' && typeof value === 'string' && actual.includes(value)
    case 'starts_with':
      return typeof actual === 'string' && typeof value === 'string' && actual.startsWith(value)
    case 'ends_with':
      return typeof actual === 'string' && typeof value === 'string' && actual.endsWith(value)
    default:
      return ordered(actual, value, op)
  }
}

function same(a: unknown, b: unknown): boolean {
  return a === b || (typeof a === 'object' && a !== null && JSON.stringify(a) === JSON.stringify(b))
}

function ordered(actual: unknown, value: unknown, op: '<' | '<=' | '>' | '>='): boolean {
  const comparable =
    (typeof actual === 'number' && typeof value === 'number') ||
    (typeof actual === 'string' && typeof value === 'string')
  if (!comparable) return false
  const [a, b] = [actual as number | string, value as number | string]
  if (op === '<') return a < b
  if (op === '<=') return a <= b
  if (op === '>') return a > b
  return a >= b
}
