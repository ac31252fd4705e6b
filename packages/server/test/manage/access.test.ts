import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import { join } from 'node:path'
import { DatabaseSync } from 'node:sqlite'
import { after, before, describe, test } from 'node:test'
import { startTestSluice, type TestSluice } from '../helpers/sluice.ts'
import { until } from '../reliability/helpers.ts'
import { freshDatabase } from '../store/pg.ts'
import { destinationBody, rawRequest } from './helpers.ts'

const bearer = (token: string) => `Bearer ${token}`

async function createToken(sluice: TestSluice, role: string, name = `${role} token`): Promise<string> {
  const created = await sluice.api('POST', '/api/v1/tokens', { name, role })
  assert.equal(created.status, 201, JSON.stringify(created.body))
  return created.body.token
}

/** Signs in and returns the session cookie (`name=value`). */
async function signIn(baseUrl: string, token: string): Promise<{ cookie: string; setCookie: string }> {
  const response = await fetch(`${baseUrl}/api/v1/session`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ token }),
  })
  assert.equal(response.status, 200)
  const setCookie = response.headers.get('set-cookie') ?? ''
  return { cookie: setCookie.split(';')[0]!, setCookie }
}

describe('access tokens, roles and web-app sessions', () => {
  let sluice: TestSluice

  before(async () => {
    sluice = await startTestSluice()
  })
  after(() => sluice.destroy())

  test('a new token is shown once and only its hash is stored', async () => {
    const created = await sluice.api('POST', '/api/v1/tokens', { name: ' Ops dashboard ', role: 'viewer' })
    assert.equal(created.status, 201)
    assert.equal(created.body.name, 'Ops dashboard')
    assert.equal(created.body.role, 'viewer')
    assert.equal(created.body.lastUsedAt, null)
    const token: string = created.body.token
    assert.ok(token.length >= 40)

    const listed = await sluice.api('GET', '/api/v1/tokens')
    const record = listed.body.tokens.find((item: { id: string }) => item.id === created.body.id)
    assert.deepEqual(Object.keys(record).sort(), ['createdAt', 'id', 'lastUsedAt', 'name', 'role'])

    const db = new DatabaseSync(join(sluice.dataDir, 'sluice.db'), { readOnly: true })
    try {
      const rows = db.prepare('SELECT * FROM access_tokens').all()
      assert.equal(rows.length >= 1, true)
      assert.ok(!JSON.stringify(rows).includes(token), 'the token text is not stored')
      const hash = createHash('sha256').update(token).digest('hex')
      assert.ok(rows.some((row) => row.token_hash === hash))
    } finally {
      db.close()
    }
  })

  test('bad token requests get a 400 naming the field', async () => {
    const response = await sluice.api('POST', '/api/v1/tokens', { name: 'x', role: 'owner' })
    assert.equal(response.status, 400)
    assert.match(response.body.error.message, /role/)
  })

  test('a viewer reads everything with secrets masked, changes nothing, and cannot manage tokens', async () => {
    const source = await sluice.createSource('Viewer source')
    const body: any = destinationBody([source.id])
    body.settings.webhooks[0].headers = { Authorization: 'Basic c2VjcmV0' }
    const destination = await sluice.api('POST', '/api/v1/destinations', body)
    assert.equal(destination.status, 201)
    const viewer = bearer(await createToken(sluice, 'viewer'))

    const sources = await rawRequest(sluice.url, 'GET', '/api/v1/sources', { authorization: viewer })
    assert.equal(sources.status, 200)
    assert.ok(!sources.text.includes(source.writeKey), 'no write key is shown to a viewer')
    assert.equal(sources.body.sources.find((s: { id: string }) => s.id === source.id).writeKey, '••••••••')
    const one = await rawRequest(sluice.url, 'GET', `/api/v1/destinations/${destination.body.id}`, {
      authorization: viewer,
    })
    assert.equal(one.status, 200)
    assert.ok(!one.text.includes('c2VjcmV0'), 'no header value is shown to a viewer')
    assert.deepEqual(one.body.settings.webhooks[0].headers, { Authorization: '••••••••' })
    const deliveries = await rawRequest(
      sluice.url,
      'GET',
      `/api/v1/destinations/${destination.body.id}/deliveries`,
      { authorization: viewer },
    )
    assert.equal(deliveries.status, 200)

    const changes = [
      { method: 'POST', path: '/api/v1/sources', body: { name: 'nope' } },
      { method: 'POST', path: `/api/v1/sources/${source.id}/rotate-write-key` },
      { method: 'PATCH', path: `/api/v1/destinations/${destination.body.id}`, body: { enabled: false } },
      { method: 'DELETE', path: `/api/v1/destinations/${destination.body.id}` },
      { method: 'POST', path: '/api/v1/tokens', body: { name: 'mine', role: 'admin' } },
      { method: 'GET', path: '/api/v1/tokens' },
    ]
    for (const change of changes) {
      const response = await rawRequest(sluice.url, change.method, change.path, {
        authorization: viewer,
        body: change.body,
      })
      assert.equal(response.status, 403, `${change.method} ${change.path}`)
      assert.equal(response.body.error.code, 'forbidden')
    }
    const after = await sluice.api('GET', `/api/v1/sources/${source.id}`)
    assert.equal(after.body.writeKey, source.writeKey, 'nothing changed')
  })

  test('an admin access token may do everything, and its last use is recorded', async () => {
    const admin = bearer(await createToken(sluice, 'admin', 'Second admin'))
    const created = await rawRequest(sluice.url, 'POST', '/api/v1/sources', {
      authorization: admin,
      body: { name: 'By token' },
    })
    assert.equal(created.status, 201)
    assert.ok(created.body.writeKey.length > 20)
    const tokens = await until(
      'the last use to be recorded',
      async () => (await sluice.api('GET', '/api/v1/tokens')).body.tokens,
      (list: { name: string; lastUsedAt: string | null }[]) =>
        list.some((item) => item.name === 'Second admin' && item.lastUsedAt !== null),
    )
    assert.ok(tokens.length >= 1)
  })

  test('a revoked token stops working, and so do its sessions', async () => {
    const created = await sluice.api('POST', '/api/v1/tokens', { name: 'Short-lived', role: 'viewer' })
    const token = bearer(created.body.token)
    const { cookie } = await signIn(sluice.url, created.body.token)
    assert.equal(
      (await rawRequest(sluice.url, 'GET', '/api/v1/sources', { authorization: token })).status,
      200,
    )
    const revoked = await sluice.api('DELETE', `/api/v1/tokens/${created.body.id}`)
    assert.equal(revoked.status, 204)
    await until(
      'the revoked token to be refused',
      async () => (await rawRequest(sluice.url, 'GET', '/api/v1/sources', { authorization: token })).status,
      (status) => status === 401,
    )
    const bySession = await fetch(`${sluice.url}/api/v1/sources`, { headers: { cookie } })
    assert.equal(bySession.status, 401)
    assert.equal((await sluice.api('DELETE', `/api/v1/tokens/${created.body.id}`)).status, 404)
  })

  test('sign-in sets an HttpOnly SameSite=Strict cookie; cookie changes need the CSRF header and the same origin', async () => {
    const wrong = await rawRequest(sluice.url, 'POST', '/api/v1/session', { body: { token: 'nope' } })
    assert.equal(wrong.status, 401)
    assert.equal(wrong.body.error.field, '/token')

    const { cookie, setCookie } = await signIn(sluice.url, sluice.adminToken)
    assert.match(setCookie, /HttpOnly/)
    assert.match(setCookie, /SameSite=Strict/)
    assert.match(setCookie, /Path=\//)

    const me = await fetch(`${sluice.url}/api/v1/session`, { headers: { cookie } })
    assert.deepEqual(await me.json(), { role: 'admin', name: 'Admin token' })

    const create = (headers: Record<string, string>) =>
      fetch(`${sluice.url}/api/v1/sources`, {
        method: 'POST',
        headers: { cookie, 'content-type': 'application/json', ...headers },
        body: JSON.stringify({ name: 'From the web app' }),
      })
    const noHeader = await create({})
    assert.equal(noHeader.status, 403)
    assert.equal(((await noHeader.json()) as any).error.code, 'csrf_refused')
    assert.equal((await create({ 'x-sluice-csrf': '1', origin: 'https://evil.example' })).status, 403)
    assert.equal((await create({ 'x-sluice-csrf': '1', origin: sluice.url })).status, 201)

    const forged = cookie.replace(/.$/, (last) => (last === 'A' ? 'B' : 'A'))
    assert.equal((await fetch(`${sluice.url}/api/v1/sources`, { headers: { cookie: forged } })).status, 401)

    const out = await fetch(`${sluice.url}/api/v1/session`, { method: 'DELETE', headers: { cookie } })
    assert.equal(out.status, 204)
    assert.match(out.headers.get('set-cookie') ?? '', /sluice_session=; .*Max-Age=0/)
  })

  test('sign-out ends the session: the same cookie is refused at once, and after a restart', async () => {
    const { cookie } = await signIn(sluice.url, sluice.adminToken)
    const other = await signIn(sluice.url, await createToken(sluice, 'viewer', 'Signed in elsewhere'))
    const read = (as: string) => fetch(`${sluice.url}/api/v1/sources`, { headers: { cookie: as } })
    assert.equal((await read(cookie)).status, 200)
    const out = await fetch(`${sluice.url}/api/v1/session`, { method: 'DELETE', headers: { cookie } })
    assert.equal(out.status, 204)
    assert.equal((await read(cookie)).status, 401)
    assert.equal((await fetch(`${sluice.url}/api/v1/session`, { headers: { cookie } })).status, 401)
    assert.equal((await read(other.cookie)).status, 200, 'another session goes on')

    await sluice.close()
    sluice = await startTestSluice({ dataDir: sluice.dataDir })
    assert.equal((await read(cookie)).status, 401, 'still ended after a restart')
    assert.equal((await read(other.cookie)).status, 200)
  })
})

describe('sign-out across processes sharing PostgreSQL', () => {
  test('a session signed out on one process is refused by another, like a revoked token', async () => {
    const database = await freshDatabase()
    const adminToken = 'shared-admin-token-0123456789'
    const first = await startTestSluice({ databaseUrl: database.url, adminToken })
    const second = await startTestSluice({ databaseUrl: database.url, adminToken })
    try {
      const { cookie } = await signIn(first.url, adminToken)
      const read = () => fetch(`${second.url}/api/v1/sources`, { headers: { cookie } })
      assert.equal((await read()).status, 200)
      const out = await fetch(`${first.url}/api/v1/session`, { method: 'DELETE', headers: { cookie } })
      assert.equal(out.status, 204)
      assert.equal((await fetch(`${first.url}/api/v1/sources`, { headers: { cookie } })).status, 401)
      // Within the token cache's bound (2 s), as for a revoked token; the poll allows more on a loaded machine.
      await until(
        'the other process to refuse the signed-out session',
        async () => (await read()).status,
        (s) => s === 401,
        30_000,
      )
    } finally {
      await first.close()
      await second.close()
      await database.drop()
    }
  })
})

describe('token revocation across processes sharing PostgreSQL', () => {
  test('a token revoked on one process is refused by another within 5 seconds', async () => {
    const database = await freshDatabase()
    const first = await startTestSluice({
      databaseUrl: database.url,
      adminToken: 'shared-admin-token-0123456789',
    })
    const second = await startTestSluice({
      databaseUrl: database.url,
      adminToken: 'shared-admin-token-0123456789',
    })
    try {
      const created = await first.api('POST', '/api/v1/tokens', { name: 'Roaming', role: 'viewer' })
      const token = bearer(created.body.token)
      const read = () => rawRequest(second.url, 'GET', '/api/v1/sources', { authorization: token })
      assert.equal((await read()).status, 200)
      assert.equal((await first.api('DELETE', `/api/v1/tokens/${created.body.id}`)).status, 204)
      // The promise is "within 5 s"; the poll allows more so a loaded machine cannot make it flaky, and
      // the cache bound itself (2 s) is what guarantees the 5 s.
      await until(
        'the other process to refuse the revoked token',
        async () => (await read()).status,
        (s) => s === 401,
        30_000,
      )
    } finally {
      await first.close()
      await second.close()
      await database.drop()
    }
  })
})
