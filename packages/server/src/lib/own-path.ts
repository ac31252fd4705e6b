/**
 * Reading and writing user-named properties of JSON objects (calls' properties, profiles' traits,
 * computed values) by own properties only. A plain `object[name]` also finds what every object
 * inherits (`constructor`, `toString`, `valueOf`, `hasOwnProperty`, `__proto__`), so a path or trait
 * with such a name would match every profile, and `object['__proto__'] = value` would replace the
 * prototype instead of storing a trait. Every user-given name goes through here.
 */

/** The own property `name` of `value` when it is a (non-array) object; otherwise undefined. */
export function ownValue(value: unknown, name: string): unknown {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined
  return Object.hasOwn(value, name) ? (value as Record<string, unknown>)[name] : undefined
}

/**
 * The value at `path` in `root`, own properties only: the property named by the whole path if there
 * is one (a key may contain dots), else the dotted path followed step by step (`address.city`).
 */
export function valueAtPath(root: unknown, path: string): unknown {
  const whole = ownValue(root, path)
  if (whole !== undefined || !path.includes('.')) return whole
  let current: unknown = root
  for (const part of path.split('.')) {
    current = ownValue(current, part)
    if (current === undefined) return undefined
  }
  return current
}

/** Sets the own property `name`, whatever the name (`__proto__` included), as JSON.parse would. */
export function setOwn(record: Record<string, unknown>, name: string, value: unknown): void {
  Object.defineProperty(record, name, { value, enumerable: true, writable: true, configurable: true })
}
