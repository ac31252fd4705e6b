/**
 * The published entry points: the ESM and CommonJS builds (made by `npm run build`, which `npm test`
 * runs first) load under their own module systems and expose the same API as the source.
 */
import assert from 'node:assert/strict'
import { createRequire } from 'node:module'
import { join } from 'node:path'
import { test } from 'node:test'
import { pathToFileURL } from 'node:url'

const root = join(import.meta.dirname, '..')

test('the ESM build exports Analytics and ValidationError', async () => {
  const esm = await import(pathToFileURL(join(root, 'dist/esm/index.js')).href)
  assert.equal(typeof esm.Analytics, 'function')
  assert.equal(typeof esm.ValidationError, 'function')
  const analytics = new esm.Analytics({ writeKey: 'k', endpoint: 'http://127.0.0.1:9' })
  assert.throws(() => analytics.track({ userId: 'u' }), esm.ValidationError)
  await analytics.close()
})

test('the CommonJS build loads with require() and has type declarations beside it', async () => {
  const require = createRequire(import.meta.url)
  const cjs = require(join(root, 'dist/cjs/index.js'))
  assert.equal(typeof cjs.Analytics, 'function')
  const analytics = new cjs.Analytics({ writeKey: 'k', endpoint: 'http://127.0.0.1:9' })
  assert.throws(() => analytics.identify({}), cjs.ValidationError)
  await analytics.close()
  assert.ok(require.resolve(join(root, 'dist/cjs/index.d.ts')))
  assert.ok(require.resolve(join(root, 'dist/esm/index.d.ts')))
})
