/** Whether this runtime can gzip request bodies (`CompressionStream`: Node 18+, Deno, Bun, browsers, workers). */
export const gzipAvailable = typeof CompressionStream === 'function'

/** `text` as UTF-8, gzip-compressed with the web-standard CompressionStream (no Node API). */
export async function gzip(text: string): Promise<Uint8Array<ArrayBuffer>> {
  const stream = new Blob([text]).stream().pipeThrough(new CompressionStream('gzip'))
  return new Uint8Array(await new Response(stream).arrayBuffer())
}
