/**
 * The rule for the name of a source or destination, whichever way it arrives (management API, CLI).
 */

import { fieldLabel } from '../lib/json-pointer.ts'
import { ValidationError } from './errors.ts'

/** The longest name accepted, in characters (Unicode code points, as JSON Schema's `maxLength` counts). */
export const NAME_MAX_LENGTH = 200

/**
 * Returns the name as stored: surrounding whitespace removed. Refuses a name longer than
 * `NAME_MAX_LENGTH` as given, or one with no visible character. `field` is the JSON pointer the error
 * names; default `/name`.
 */
export function cleanName(name: string, field = '/name'): string {
  // Counted before trimming, like the API's schema, so every caller refuses the same names.
  if (codePointLength(name) > NAME_MAX_LENGTH) {
    throw new ValidationError(
      field,
      `${fieldLabel(field)} is too long; at most ${NAME_MAX_LENGTH} characters are allowed.`,
    )
  }
  const trimmed = name.trim()
  if (trimmed === '') {
    throw new ValidationError(field, `${fieldLabel(field)} must contain at least one visible character.`)
  }
  return trimmed
}

function codePointLength(text: string): number {
  let length = 0
  for (const _ of text) length++
  return length
}
