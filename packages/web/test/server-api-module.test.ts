/**
 * `@sluice/server/api` (packages/server/src/api/index.ts) is bundled into the web app and loaded by bench: at runtime it may load nothing
 * but the domain's constants. A Node built-in, a package or a schema module reached from it would pull
 * the server into the browser bundle (or fail there).
 */
import assert from 'node:assert/strict'
import { registerHooks } from 'node:module'
import { test } from 'node:test'
import { fileURLToPath } from 'node:url'

test('the API module loads only pure domain modules at runtime, and exports the constants the app uses', async () => {
  const loaded: string[] = []
  const hooks = registerHooks({
    resolve(specifier, context, nextResolve) {
      const resolved = nextResolve(specifier, context)
      loaded.push(resolved.url)
      return resolved
    },
  })
  try {
    // The source, as the web app's bundler and bench read it.
    const api = await import('../../server/src/api/index.ts')
    assert.deepEqual(api.MESSAGE_TYPES, ['identify', 'track', 'page', 'screen', 'group', 'alias'])
    assert.ok(api.WHERE_OPERATORS.includes('not_exists'))
  } finally {
    hooks.deregister()
  }
  const server = fileURLToPath(new URL('../../server/', import.meta.url))
  const places = loaded.map((url) => (url.startsWith('file:') ? fileURLToPath(url).replace(server, '') : url))
  assert.ok(places.length > 1, `the module was loaded afresh: ${places.join(', ')}`)
  const impure = places.filter((place) => !/^src\/(api\/index|domain\/[\w/-]+|lib\/[\w-]+)\.ts$/.test(place))
  assert.deepEqual(impure, [], 'modules loaded besides the API module and domain modules')
})
