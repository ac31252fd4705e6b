interface WebCrypto {
  randomUUID?: () => string
  getRandomValues(array: Uint8Array): Uint8Array
}

const webCrypto = (globalThis as { crypto?: WebCrypto }).crypto

/** RFC 4122 version 4 UUID from `getRandomValues`, where `randomUUID` is missing (insecure browser contexts). */
function uuidFromRandomValues(): string {
  const bytes = new Uint8Array(16)
  webCrypto!.getRandomValues(bytes)
  bytes[6] = (bytes[6]! & 0x0f) | 0x40
  bytes[8] = (bytes[8]! & 0x3f) | 0x80
  let hex = ''
  for (let i = 0; i < 16; i++) {
    hex += bytes[i]!.toString(16).padStart(2, '0')
    if (i === 3 || i === 5 || i === 7 || i === 9) hex += '-'
  }
  return hex
}

/** A random v4 UUID, used as the default `messageId`. */
export const uuid: () => string =
  typeof webCrypto?.randomUUID === 'function' ? webCrypto.randomUUID.bind(webCrypto) : uuidFromRandomValues
