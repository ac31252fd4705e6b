/** `Authorization` value for a write key: HTTP Basic, the key as user name and an empty password. */
export function basicAuth(writeKey: string): string {
  // btoa takes Latin-1 only; encoding to UTF-8 first keeps any key valid.
  let binary = ''
  for (const byte of new TextEncoder().encode(`${writeKey}:`)) binary += String.fromCharCode(byte)
  return `Basic ${btoa(binary)}`
}
