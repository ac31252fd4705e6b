/**
 * Secrets as the store core keeps them (destinations' settings, write keys): sealed with the secret key
 * when the store has one (lib/secret-box.ts), in clear otherwise; a value sealed, read by a store
 * without a key, is an error that says which setting is missing.
 */
import { isSealed, type SecretBox, SecretKeyError } from '../../lib/secret-box.ts'

export class StoredSecrets {
  readonly #box: SecretBox | null

  constructor(box: SecretBox | null) {
    this.#box = box
  }

  /** `plain` as stored for the row `context` (its id). */
  seal(plain: string, context: string): string {
    return this.#box ? this.#box.seal(plain, context) : plain
  }

  /** The plain text of a stored value; `what` names it in the error when it cannot be opened. */
  open(stored: string, context: string, what: string): string {
    if (this.#box) return this.#box.open(stored, context)
    if (isSealed(stored)) {
      throw new SecretKeyError(`${what} is encrypted, and no secret key is configured: set SLUICE_SECRET_KEY`)
    }
    return stored
  }

  /** Whether a stored value should be sealed (again) with the current key. */
  stale(stored: string): boolean {
    return this.#box?.stale(stored) ?? false
  }
}
