/**
 * `1000000` → `"1,000,000"`: what `toLocaleString('en')` gives for an integer, without it. The first
 * `toLocaleString` loads ICU's number formatting, about 5 MB of resident memory for the life of the
 * process, and schema descriptions use this at start-up.
 */
export function thousands(value: number): string {
  return String(value).replace(/\B(?=(\d{3})+(?!\d))/g, ',')
}
