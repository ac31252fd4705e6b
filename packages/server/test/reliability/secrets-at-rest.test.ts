// Secrets at rest: the data directory and its files are private (0700, 0600), destinations' settings
// (shared secret, header values, URL) are encrypted in the database with a key kept apart from it, on
// SQLite and PostgreSQL; settings stored in clear by an older version are sealed at start; a key can
// be rotated with SLUICE_SECRET_KEY_PREVIOUS (the alert URL and secret move to the new key too); a wrong
// key stops the start with a message that says so.
// Deliveries still sign with the secret, and the API answers as before.
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { chmodSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { DatabaseSync } from 'node:sqlite'
import { after, describe, test } from 'node:test'
import { secretKeyId } from '../../src/lib/secret-box.ts'
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.ts'
import { opensslHmacSha1, type Receiver, startReceiver } from '../deliver/receivers.ts'
import { startTestSluice, type TestSluice } from '../helpers/sluice.ts'
import { send } from '../helpers/tracking.ts'
import { freshDatabase, freshSchema, openPgStore, withAdmin } from '../store/pg.ts'
import { until } from './helpers.ts'

const SHARED_SECRET = `shared-${randomBytes(8).toString('hex')}`
const HEADER_VALUE = `header-${randomBytes(8).toString('hex')}`
const URL_TOKEN = `urltoken${randomBytes(8).toString('hex')}`
const SECRETS = [SHARED_SECRET, HEADER_VALUE, URL_TOKEN]
const ALERT_TOKEN = `alerttoken${randomBytes(8).toString('hex')}`
const ALERT_SECRET = `whsec_${randomBytes(32).toString('base64')}`
const key = () => randomBytes(32).toString('base64')

const cleanup: (() => Promise<void>)[] = []
after(async () => {
  for (const close of cleanup.reverse()) await close()
})

let receiver: Receiver
async function theReceiver(): Promise<Receiver> {
  if (!receiver) {
    receiver = await startReceiver()
    cleanup.push(() => receiver.close())
  }
  return receiver
}

const settings = (r: Receiver) => ({
  webhooks: [{ url: `${r.url}/hook?token=${URL_TOKEN}`, headers: { 'X-Api-Key': HEADER_VALUE } }],
  sharedSecret: SHARED_SECRET,
})

async function dataDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'sluice-secrets-'))
  cleanup.push(() => rm(dir, { recursive: true, force: true }))
  return dir
}

async function started(overrides: Parameters<typeof startTestSluice>[0]): Promise<TestSluice> {
  const sluice = await startTestSluice(overrides)
  cleanup.push(() => sluice.close())
  return sluice
}

/** Every byte Sluice keeps in its data directory, as text. */
function everythingOnDisk(dir: string): string {
  return readdirSync(dir)
    .map((name) => readFileSync(join(dir, name)).toString('latin1'))
    .join('\n')
}

const mode = (path: string) => (statSync(path).mode & 0o777).toString(8)

/** A signed delivery of a call through the API's source: the signature checks out with the secret. */
async function deliversSigned(sluice: TestSluice, writeKey: string): Promise<void> {
  const r = await theReceiver()
  const before = r.requests.length
  const event = `Signed ${randomBytes(4).toString('hex')}`
  assert.equal((await send(sluice.url, '/v1/track', { userId: 'u', event }, { writeKey })).status, 200)
  await until(
    'the signed delivery',
    () => r.requests.slice(before).find((request) => request.body.toString().includes(event)),
    (found) => found !== undefined,
  )
  const request = r.requests.slice(before).find((request) => request.body.toString().includes(event))!
  assert.equal(request.headers['x-signature'], opensslHmacSha1(request.body, SHARED_SECRET))
  assert.equal(request.headers['x-api-key'], HEADER_VALUE)
  assert.match(request.url, new RegExp(URL_TOKEN))
}

async function createdThroughApi(sluice: TestSluice): Promise<{ writeKey: string; destinationId: string }> {
  const source = await sluice.createSource()
  const created = await sluice.api('POST', '/api/v1/destinations', {
    name: 'Signed',
    type: 'webhooks',
    sourceIds: [source.id],
    settings: settings(await theReceiver()),
  })
  assert.equal(created.status, 201, JSON.stringify(created.body))
  return { writeKey: source.writeKey, destinationId: created.body.id }
}

describe('secrets at rest on SQLite', () => {
  test('private files, sealed settings, signed deliveries, the same API answers', async () => {
    const dir = await dataDir()
    const sluice = await started({ dataDir: dir, adminToken: undefined })
    const { writeKey, destinationId } = await createdThroughApi(sluice)
    const answer = (await sluice.api('GET', `/api/v1/destinations/${destinationId}`)).body
    assert.equal(answer.settings.sharedSecretSet, true)
    assert.equal(JSON.stringify(answer).includes(SHARED_SECRET), false, 'the shared secret is never answered')
    assert.equal(answer.settings.webhooks[0].headers['X-Api-Key'], HEADER_VALUE, 'admins see header values')
    const before = everythingOnDisk(dir)
    for (const secret of [...SECRETS, writeKey])
      assert.equal(before.includes(secret), false, `${secret} on disk`)
    assert.match(before, /sluice-secret:v1:/)
    await deliversSigned(sluice, writeKey)

    assert.equal(mode(dir), '700')
    for (const file of ['sluice.db', 'sluice.db-wal', 'sluice.db-shm', 'admin-token', 'secret-key']) {
      assert.equal(mode(join(dir, file)), '600', file)
    }
    // Attempts record the URL each went to (decisions.md): the shared secret, headers and key never.
    const after = everythingOnDisk(dir)
    for (const secret of [SHARED_SECRET, HEADER_VALUE, writeKey]) {
      assert.equal(after.includes(secret), false, `${secret} on disk`)
    }
    const answered = (await sluice.api('GET', '/api/v1/sources')).body
    assert.ok(JSON.stringify(answered).includes(writeKey), 'admins still see the write key')
  })

  test('an existing directory and files get private modes; settings stored in clear are sealed at start', async () => {
    const dir = await dataDir()
    const old = new SqliteStore({ dataDir: dir, synchronous: 'NORMAL' })
    await old.migrate()
    const source = await old.createSource({ name: 'old', enabled: true })
    await old.createDestination({
      name: 'stored in clear',
      type: 'webhooks',
      enabled: true,
      sourceIds: [source.id],
      settings: settings(await theReceiver()),
    })
    await old.close()
    assert.equal(everythingOnDisk(dir).includes(SHARED_SECRET), true, 'the old version kept it in clear')
    chmodSync(dir, 0o755)
    chmodSync(join(dir, 'sluice.db'), 0o644)
    writeFileSync(join(dir, 'admin-token'), 'an-old-admin-token-0123456789\n', { mode: 0o644 })

    const sluice = await started({ dataDir: dir, adminToken: undefined })
    assert.equal(mode(dir), '700')
    assert.equal(mode(join(dir, 'sluice.db')), '600')
    assert.equal(mode(join(dir, 'admin-token')), '600')
    const disk = everythingOnDisk(dir)
    for (const secret of [...SECRETS, source.writeKey]) {
      assert.equal(disk.includes(secret), false, `${secret} still on disk`)
    }
    // The write key stored in clear before still opens the Tracking API (looked up by its hash now).
    await deliversSigned(sluice, source.writeKey)
  })

  test('rotation: the previous key opens, values move to the new key; a wrong key stops the start', async () => {
    const dir = await dataDir()
    const [first, second, wrong] = [key(), key(), key()]
    let sluice = await startTestSluice({ dataDir: dir, secretKey: first })
    const { writeKey } = await createdThroughApi(sluice)
    const alertUrl = `${(await theReceiver()).url}/alerts?token=${ALERT_TOKEN}`
    const alerts = await sluice.api('PUT', '/api/v1/alerts', { url: alertUrl, sharedSecret: ALERT_SECRET })
    assert.equal(alerts.status, 200, JSON.stringify(alerts.body))
    await sluice.close()
    /** The alert settings' row as stored: which key sealed each value. */
    const alertRow = () => {
      const db = new DatabaseSync(join(dir, 'sluice.db'), { readOnly: true })
      try {
        return db.prepare('SELECT url, shared_secret FROM alert_settings').get() as {
          url: string
          shared_secret: string
        }
      } finally {
        db.close()
      }
    }
    const sealedWith = (secretKey: string) =>
      new RegExp(`^sluice-secret:v1:${secretKeyId(Buffer.from(secretKey, 'base64'))}:`)
    assert.match(alertRow().url, sealedWith(first))
    assert.match(alertRow().shared_secret, sealedWith(first))

    await assert.rejects(startTestSluice({ dataDir: dir, secretKey: second }), (error: Error) => {
      assert.match(error.message, /encrypted with another key/)
      assert.match(error.message, /SLUICE_SECRET_KEY_PREVIOUS/)
      return true
    })

    sluice = await startTestSluice({ dataDir: dir, secretKey: second, secretKeyPrevious: first })
    await deliversSigned(sluice, writeKey)
    await sluice.close()
    // The alert URL and secret were resealed at start, like the destination's settings.
    assert.match(alertRow().url, sealedWith(second))
    assert.match(alertRow().shared_secret, sealedWith(second))

    // Every value now under the new key: the old one is no longer needed.
    sluice = await startTestSluice({ dataDir: dir, secretKey: second })
    await deliversSigned(sluice, writeKey)
    const shown = await sluice.api('GET', '/api/v1/alerts')
    assert.equal(shown.status, 200, JSON.stringify(shown.body))
    assert.equal(shown.body.url, alertUrl)
    assert.equal(shown.body.sharedSecret, `whsec_…${ALERT_SECRET.slice(-4)}`)
    await sluice.close()

    await assert.rejects(startTestSluice({ dataDir: dir, secretKey: wrong }), /encrypted with another key/)
    // Nor does a lost key file go unnoticed: a new key is generated, and it opens nothing.
    await assert.rejects(startTestSluice({ dataDir: dir }), /encrypted with another key/)
  })

  test('a malformed SLUICE_SECRET_KEY stops the start, saying how to make one', async () => {
    const { loadConfig } = await import('../../src/config.ts')
    assert.throws(
      () => loadConfig({ SLUICE_SECRET_KEY: 'too-short' }),
      /SLUICE_SECRET_KEY: .*openssl rand -base64 32/,
    )
    assert.throws(
      () => loadConfig({ SLUICE_SECRET_KEY_PREVIOUS: Buffer.alloc(16).toString('base64') }),
      /SLUICE_SECRET_KEY_PREVIOUS: must be base64 of exactly 32/,
    )
    const dir = await dataDir()
    mkdirSync(join(dir, 'sub'))
    await assert.rejects(
      startTestSluice({
        dataDir: join(dir, 'sub'),
        databaseUrl: 'postgres://127.0.0.1:9/none',
        secretKey: undefined,
      }),
      /SLUICE_SECRET_KEY: must be set when DATABASE_URL/,
    )
  })
})

describe('secrets at rest on PostgreSQL', () => {
  test('the row holds no secret; rows stored in clear are sealed at start; deliveries sign', async () => {
    const { schema, drop } = await freshSchema()
    cleanup.push(drop)
    const rows = () =>
      withAdmin(async (client) => {
        await client.query(`SET search_path TO ${schema}`)
        const destinations = (await client.query('SELECT * FROM destinations')).rows
        const sources = (await client.query('SELECT * FROM sources')).rows
        const alerts = (await client.query('SELECT * FROM alert_settings')).rows
        return JSON.stringify([destinations, sources, alerts])
      })
    const secretKeys = { current: key() }
    const old = await openPgStore(schema)
    const source = await old.createSource({ name: 'old', enabled: true })
    await old.createDestination({
      name: 'stored in clear',
      type: 'webhooks',
      enabled: true,
      sourceIds: [source.id],
      settings: settings(await theReceiver()),
    })
    const alertSettings = {
      url: `https://ops.example.com/alerts?token=${ALERT_TOKEN}`,
      sharedSecret: ALERT_SECRET,
      events: null,
    }
    await old.putAlertSettings(alertSettings, Date.now())
    await old.close()
    assert.equal((await rows()).includes(SHARED_SECRET), true)
    assert.equal((await rows()).includes(source.writeKey), true)
    assert.equal((await rows()).includes(ALERT_TOKEN), true)

    const store = await openPgStore(schema, { secretKeys })
    await store.createDestination({
      name: 'new',
      type: 'webhooks',
      enabled: true,
      sourceIds: [source.id],
      settings: settings(await theReceiver()),
    })
    const raw = await rows()
    for (const secret of [...SECRETS, source.writeKey, ALERT_TOKEN, ALERT_SECRET])
      assert.equal(raw.includes(secret), false, `${secret} in a row`)
    assert.equal((await store.getSourceByWriteKey(source.writeKey))?.id, source.id)
    const { updatedAt: _, ...alertsRead } = (await store.getAlertSettings())!
    assert.deepEqual(alertsRead, alertSettings)
    const destinations = await store.listDestinations()
    assert.deepEqual(
      destinations.map((d) => d.settings),
      [settings(receiver), settings(receiver)],
    )
    await store.close()
    await assert.rejects(
      openPgStore(schema, { secretKeys: { current: key() } }),
      /encrypted with another key/,
    )
  })

  test('two processes on one schema share the key and sign the same', async () => {
    const database = await freshDatabase()
    cleanup.push(database.drop)
    const secretKey = key()
    const first = await started({ databaseUrl: database.url, secretKey })
    const second = await started({ databaseUrl: database.url, secretKey })
    const { writeKey } = await createdThroughApi(first)
    await deliversSigned(second, writeKey)
  })
})
