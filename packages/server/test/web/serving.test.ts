import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { startTestSluice, type TestSluice } from '../helpers/sluice.ts'
import { requireBuiltApp } from './web-harness.ts'

const asBrowser = { accept: 'text/html,application/xhtml+xml,*/*;q=0.8' }

describe('serving the web app', () => {
  let sluice: TestSluice

  before(async () => {
    requireBuiltApp()
    sluice = await startTestSluice()
  })
  after(() => sluice.destroy())

  test('the app is served at / and at any page path a browser opens, with protective headers', async () => {
    for (const path of ['/', '/sources', '/destinations/dst_123', '/catalog/webhooks']) {
      const response = await fetch(sluice.url + path, { headers: asBrowser })
      assert.equal(response.status, 200, path)
      assert.match(response.headers.get('content-type') ?? '', /text\/html/, path)
      assert.match(await response.text(), /<div id="root">/, path)
      assert.match(response.headers.get('content-security-policy') ?? '', /frame-ancestors 'none'/, path)
    }
  })

  test('its assets are served with a long cache lifetime', async () => {
    const html = await (await fetch(sluice.url, { headers: asBrowser })).text()
    const script = /src="(\/assets\/[^"]+\.js)"/.exec(html)?.[1]
    assert.ok(script, 'the page loads a script from /assets/')
    const response = await fetch(sluice.url + script)
    assert.equal(response.status, 200)
    assert.match(response.headers.get('cache-control') ?? '', /immutable/)
  })

  test('API paths keep priority and unknown ones still answer JSON 404', async () => {
    const openapi = await fetch(`${sluice.url}/api/openapi.json`, { headers: asBrowser })
    assert.match(openapi.headers.get('content-type') ?? '', /application\/json/)
    for (const path of ['/api/v1/nothing-here', '/v1/nothing-here', '/assets/missing.js']) {
      const response = await fetch(sluice.url + path, { headers: asBrowser })
      assert.equal(response.status, 404, path)
      assert.equal(((await response.json()) as any).error.code, 'not_found', path)
    }
    const apiClient = await fetch(`${sluice.url}/sources`, { headers: { accept: 'application/json' } })
    assert.equal(apiClient.status, 404, 'a non-browser client gets the JSON 404')
    const sources = await fetch(`${sluice.url}/api/v1/sources`, { headers: asBrowser })
    assert.equal(sources.status, 401, 'the API answers, not the app')
  })

  test('a worker process serves no web app', async () => {
    const worker = await startTestSluice({ role: 'worker' })
    try {
      for (const path of ['/', '/sources']) {
        const response = await fetch(worker.url + path, { headers: asBrowser })
        assert.equal(response.status, 404, path)
      }
    } finally {
      await worker.destroy()
    }
  })
})
