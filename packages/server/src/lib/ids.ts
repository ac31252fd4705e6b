import { randomBytes, randomUUID } from 'node:crypto'

/** Resource ids: a readable prefix plus 12 random bytes in hex. */
export function newId(prefix: 'src' | 'dst' | 'reg' | 'tok' | 'prf' | 'ctr' | 'aud' | 'rpl' | 'evt'): string {
  return `${prefix}_${randomBytes(12).toString('hex')}`
}

/** Write keys and admin tokens: 32 random bytes, unguessable, URL and header safe. */
export function newSecretToken(): string {
  return randomBytes(32).toString('base64url')
}

export function newMessageId(): string {
  return randomUUID()
}
