/**
 * JSON pointers (RFC 6901) name the offending input in a `ValidationError`; messages show them the way
 * a person reads a JSON path.
 */

/** `/settings/webhooks/2/url` -> `settings.webhooks[2].url`. */
export function fieldLabel(pointer: string): string {
  return pointer
    .split('/')
    .filter((part) => part !== '')
    .map((part) => part.replaceAll('~1', '/').replaceAll('~0', '~'))
    .map((part, index) => (/^\d+$/.test(part) ? `[${part}]` : index === 0 ? part : `.${part}`))
    .join('')
}

/** `~` and `/` inside a pointer segment are written `~0` and `~1`. */
export function escapePointerToken(token: string): string {
  return token.replaceAll('~', '~0').replaceAll('/', '~1')
}
