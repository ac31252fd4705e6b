/**
 * Secrets at rest: AES-256-GCM (node:crypto) with a key kept apart from the database. A sealed value
 * reads `sluice-secret:v1:<key id>:<base64url of nonce, tag and ciphertext>`; the key id (the first 8
 * hex digits of the key's SHA-256) says which key sealed it, so a rotation can tell old values from
 * new and a wrong key is named at start instead of failing one decryption at a time. `context` (a
 * row's id) is bound to the value as associated data: a value copied into another row does not open.
 */
import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto'

const PREFIX = 'sluice-secret:v1:'
const NONCE_BYTES = 12
const TAG_BYTES = 16

/** A key's id as written into the values it seals. */
export function secretKeyId(key: Buffer): string {
  return createHash('sha256').update(key).digest('hex').slice(0, 8)
}

/** A stored value no configured key opens: it was sealed with another key. */
export class SecretKeyError extends Error {}

export class SecretBox {
  readonly #current: Buffer
  readonly #currentId: string
  readonly #keys: Map<string, Buffer>

  /** `current` seals and opens; `previous` (a rotation's old key) only opens. Both 32 bytes. */
  constructor(current: Buffer, previous?: Buffer) {
    for (const key of [current, previous]) {
      if (key !== undefined && key.length !== 32) throw new Error('A secret key must be 32 bytes.')
    }
    this.#current = current
    this.#currentId = secretKeyId(current)
    this.#keys = new Map([[this.#currentId, current]])
    if (previous !== undefined) this.#keys.set(secretKeyId(previous), previous)
  }

  seal(plain: string, context: string): string {
    const nonce = randomBytes(NONCE_BYTES)
    const cipher = createCipheriv('aes-256-gcm', this.#current, nonce)
    cipher.setAAD(Buffer.from(context, 'utf8'))
    const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()])
    const sealed = Buffer.concat([nonce, cipher.getAuthTag(), body]).toString('base64url')
    return `${PREFIX}${this.#currentId}:${sealed}`
  }

  /** The plain text of a stored value; a value stored before encryption is returned as it is. */
  open(stored: string, context: string): string {
    if (!isSealed(stored)) return stored
    const [keyId, sealed] = stored.slice(PREFIX.length).split(':') as [string, string]
    const key = this.#keys.get(keyId)
    if (key === undefined) {
      throw new SecretKeyError(
        `a stored secret was encrypted with another key (id ${keyId}; the configured keys are ${[...this.#keys.keys()].join(', ')}). ` +
          'Set SLUICE_SECRET_KEY to the key it was encrypted with, or keep that key as SLUICE_SECRET_KEY_PREVIOUS while rotating.',
      )
    }
    const bytes = Buffer.from(sealed, 'base64url')
    const decipher = createDecipheriv('aes-256-gcm', key, bytes.subarray(0, NONCE_BYTES))
    decipher.setAAD(Buffer.from(context, 'utf8'))
    decipher.setAuthTag(bytes.subarray(NONCE_BYTES, NONCE_BYTES + TAG_BYTES))
    try {
      return Buffer.concat([
        decipher.update(bytes.subarray(NONCE_BYTES + TAG_BYTES)),
        decipher.final(),
      ]).toString('utf8')
    } catch (error) {
      throw new SecretKeyError(`a stored secret does not open with key ${keyId}: it was altered`, {
        cause: error,
      })
    }
  }

  /** Whether a stored value should be sealed again: stored in clear, or sealed with an older key. */
  stale(stored: string): boolean {
    return !stored.startsWith(`${PREFIX}${this.#currentId}:`)
  }
}

export function isSealed(stored: string): boolean {
  return stored.startsWith(PREFIX)
}
