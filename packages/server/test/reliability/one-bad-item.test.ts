// One item the store refuses holds up none of the others in the loops that share work: a destination
// whose deliveries cannot be claimed, a regulation whose status cannot be stored. The refusals are
// real: triggers in the server's own SQLite file.
import assert from 'node:assert/strict'
import { DatabaseSync } from 'node:sqlite'
import { after, describe, test } from 'node:test'
import { databasePath } from '../../src/store/sqlite/database.ts'
import { eventually, type Receiver, startReceiver } from '../deliver/receivers.ts'
import { startTestSluice, type TestSluice } from '../helpers/sluice.ts'
import { send } from '../helpers/tracking.ts'
import { until } from './helpers.ts'

const cleanup: (() => Promise<void>)[] = []
after(async () => {
  for (const close of cleanup.reverse()) await close()
})

async function started(): Promise<{ sluice: TestSluice; receiver: Receiver }> {
  const sluice = await startTestSluice({ retry: { baseDelayMs: 40, maxDelayMs: 80, windowMs: 10_000 } })
  cleanup.push(() => sluice.destroy())
  const receiver = await startReceiver()
  cleanup.push(() => receiver.close())
  return { sluice, receiver }
}

/** Runs SQL on the server's database beside it (triggers the server's statements then meet). */
function beside(sluice: TestSluice, sql: string): void {
  const db = new DatabaseSync(databasePath(sluice.dataDir), { timeout: 5_000 })
  try {
    db.exec(sql)
  } finally {
    db.close()
  }
}

describe('one bad item fails alone', () => {
  test('a destination whose deliveries cannot be claimed holds up no other destination', async () => {
    const { sluice, receiver } = await started()
    const source = await sluice.createSource()
    const settings = { webhooks: [{ url: `${receiver.url}/hook`, headers: {} }], sharedSecret: null }
    const refused = await sluice.store.createDestination({
      name: 'a refused',
      type: 'webhooks',
      enabled: true,
      sourceIds: [source.id],
      settings: { ...settings, webhooks: [{ url: `${receiver.url}/refused`, headers: {} }] },
    })
    await sluice.store.createDestination({
      name: 'b fine',
      type: 'webhooks',
      enabled: true,
      sourceIds: [source.id],
      settings,
    })
    beside(
      sluice,
      `CREATE TRIGGER refuse_claims BEFORE UPDATE ON deliveries WHEN NEW.destination_id = '${refused.id}'
       BEGIN SELECT RAISE(ABORT, 'refused by the test'); END`,
    )
    for (let i = 0; i < 3; i++) {
      const answer = await send(
        sluice.url,
        '/v1/track',
        { userId: 'u', event: `E${i}` },
        { writeKey: source.writeKey },
      )
      assert.equal(answer.status, 200)
    }
    assert.ok(
      await eventually(() => receiver.requests.filter((r) => r.url === '/hook').length === 3, 5_000),
      `${receiver.requests.length} requests arrived`,
    )
    assert.equal(receiver.requests.filter((r) => r.url === '/refused').length, 0)
  })

  test('a regulation whose status cannot be stored holds up no other regulation', async () => {
    const { sluice } = await started()
    beside(
      sluice,
      `CREATE TRIGGER refuse_status BEFORE UPDATE OF status ON regulations WHEN NEW.subject_ids LIKE '%stuck%'
       BEGIN SELECT RAISE(ABORT, 'refused by the test'); END`,
    )
    const create = async (subject: string) => {
      const created = await sluice.api('POST', '/api/v1/regulations', {
        regulationType: 'DELETE_ONLY',
        subjectType: 'USER_ID',
        subjectIds: [subject],
      })
      assert.equal(created.status, 201, JSON.stringify(created.body))
      return created.body.id as string
    }
    const stuck = await create('stuck-user')
    const fine = await create('fine-user')
    await until(
      'the other regulation finished',
      async () => (await sluice.api('GET', `/api/v1/regulations/${fine}`)).body.status,
      (status) => status === 'FINISHED',
    )
    assert.equal((await sluice.api('GET', `/api/v1/regulations/${stuck}`)).body.status, 'INITIALIZED')
  })

  test("a request whose messages cannot be erased holds up no other request's erasure", async () => {
    const { sluice } = await started()
    const source = await sluice.createSource()
    for (const userId of ['stuck-eraser', 'fine-eraser']) {
      const answer = await send(
        sluice.url,
        '/v1/track',
        { userId, event: 'E' },
        { writeKey: source.writeKey },
      )
      assert.equal(answer.status, 200)
    }
    beside(
      sluice,
      `CREATE TRIGGER refuse_erasure BEFORE DELETE ON messages WHEN OLD.payload LIKE '%stuck-eraser%'
       BEGIN SELECT RAISE(ABORT, 'refused by the test'); END`,
    )
    const create = async (subject: string) => {
      const created = await sluice.api('POST', '/api/v1/regulations', {
        regulationType: 'DELETE_ONLY',
        subjectType: 'USER_ID',
        subjectIds: [subject],
      })
      assert.equal(created.status, 201, JSON.stringify(created.body))
      return created.body.id as string
    }
    const stuck = await create('stuck-eraser')
    const fine = await create('fine-eraser')
    await until(
      'the other request finished',
      async () => (await sluice.api('GET', `/api/v1/regulations/${fine}`)).body.status,
      (status) => status === 'FINISHED',
    )
    assert.notEqual((await sluice.api('GET', `/api/v1/regulations/${stuck}`)).body.status, 'FINISHED')
    const [left] = await Promise.all([sluice.store.countMessages()])
    assert.equal(left, 1, "only the stuck user's call is left")
  })

  test('an outcome that cannot be recorded takes no other outcome of its commit with it', async () => {
    const { sluice, receiver } = await started()
    const source = await sluice.createSource()
    const destination = (name: string, path: string) =>
      sluice.store.createDestination({
        name,
        type: 'webhooks',
        enabled: true,
        sourceIds: [source.id],
        settings: { webhooks: [{ url: `${receiver.url}${path}`, headers: {} }], sharedSecret: null },
      })
    await destination('refused outcomes', '/refused')
    const fine = await destination('fine outcomes', '/fine')
    beside(
      sluice,
      `CREATE TRIGGER refuse_attempts BEFORE INSERT ON attempts WHEN NEW.url LIKE '%/refused'
       BEGIN SELECT RAISE(ABORT, 'refused by the test'); END`,
    )
    // Both destinations' outcomes settle together, so they share commits.
    const batch = Array.from({ length: 10 }, (_, i) => ({ type: 'track', userId: 'u', event: `E${i}` }))
    assert.equal((await send(sluice.url, '/v1/batch', { batch }, { writeKey: source.writeKey })).status, 200)
    // Well within the 30 s lease: an outcome lost with a refused one would wait that long to be retried.
    await until(
      "every fine delivery's outcome recorded",
      async () => (await sluice.store.listDeliveries(fine.id, { limit: 50 })).map((d) => d.status),
      (statuses) => statuses.length === 10 && statuses.every((status) => status === 'delivered'),
      8_000,
    )
    assert.equal(receiver.requests.filter((r) => r.url === '/fine').length, 10, 'each sent once')
  })

  test("a deletion whose profile cannot be erased holds up no other deletion's profile erasure", async () => {
    const { sluice } = await started()
    const source = await sluice.createSource()
    for (const userId of ['stuck-profile', 'fine-profile']) {
      const answer = await send(
        sluice.url,
        '/v1/identify',
        { userId, traits: { plan: 'x' } },
        { writeKey: source.writeKey },
      )
      assert.equal(answer.status, 200)
    }
    const profile = (userId: string) => sluice.api('GET', `/api/v1/profiles?userId=${userId}`)
    for (const userId of ['stuck-profile', 'fine-profile']) {
      await until(
        `${userId}'s profile`,
        async () => (await profile(userId)).status,
        (status) => status === 200,
      )
    }
    beside(
      sluice,
      `CREATE TRIGGER refuse_profile_erasure BEFORE DELETE ON profile_identities WHEN OLD.value = 'stuck-profile'
       BEGIN SELECT RAISE(ABORT, 'refused by the test'); END`,
    )
    for (const subject of ['stuck-profile', 'fine-profile']) {
      const created = await sluice.api('POST', '/api/v1/regulations', {
        regulationType: 'DELETE_ONLY',
        subjectType: 'USER_ID',
        subjectIds: [subject],
      })
      assert.equal(created.status, 201, JSON.stringify(created.body))
    }
    await until(
      "the other user's profile erased",
      async () => (await profile('fine-profile')).status,
      (s) => s === 404,
    )
    assert.equal((await profile('stuck-profile')).status, 200)
  })
})
