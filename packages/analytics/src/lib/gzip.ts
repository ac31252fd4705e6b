/** Whether this runtime can gzip request bodies (`CompressionStream`: Node 18+, Deno, Bun, browsers, workers). */
export const gzipAvailable = typeof CompressionStream === 'function'

/** `body` (text as UTF-8, or bytes), gzip-compressed with the web-standard CompressionStream (no Node API). */
export async function gzip(body: string | Uint8Array<ArrayBuffer>): Promise<Uint8Array<ArrayBuffer>> {
  const stream = new Blob([body]).stream().pipeThrough(new CompressionStream('gzip'))
  return new Uint8Array(await new Response(stream).arrayBuffer())
}
