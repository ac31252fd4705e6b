/**
 * The browser's language as a tag `Intl` accepts. Chromium started under a POSIX locale (`LANG=C`,
 * common on servers and in containers) reports `navigator.language` as `en-US@posix`, which `Intl`
 * refuses with a RangeError; uPlot passes that value to `Intl.NumberFormat` as its module loads, so
 * under such a locale no chart could be drawn.
 */

/** Whether `Intl` takes `tag` as a locale. */
function accepted(tag: string): boolean {
  try {
    new Intl.NumberFormat(tag)
    return true
  } catch {
    return false
  }
}

/**
 * `tag` itself when `Intl` accepts it; else its part before a POSIX modifier or encoding (`en-US@posix`
 * → `en-US`, `de_DE.UTF-8` → `de-DE`); else `en-US`.
 */
export function intlLanguage(tag: string): string {
  if (accepted(tag)) return tag
  const stripped = tag.split(/[@.]/)[0]!.replaceAll('_', '-')
  return stripped !== '' && accepted(stripped) ? stripped : 'en-US'
}

/**
 * Makes `navigator.language` a tag `Intl` accepts, for code that reads it as it loads (uPlot). Changes
 * nothing when it already is one.
 */
export function ensureIntlLanguage(): void {
  if (typeof navigator === 'undefined') return
  const language = intlLanguage(navigator.language)
  if (language !== navigator.language)
    Object.defineProperty(navigator, 'language', { value: language, configurable: true })
}
