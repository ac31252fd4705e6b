// One item the store refuses holds up none of the others in the loops that share work, on SQLite and
// on PostgreSQL: a destination whose deliveries cannot be claimed, an outcome that cannot be recorded,
// a regulation whose status cannot be stored, a request whose messages or profile cannot be erased.
// The refusals are real: triggers in the server's own database.
import assert from 'node:assert/strict'
import { DatabaseSync } from 'node:sqlite'
import { after, describe, test } from 'node:test'
import { databasePath } from '../../src/store/sqlite/database.ts'
import { eventually, startReceiver } from '../deliver/receivers.ts'
import { startTestSluice, type TestSluice } from '../helpers/sluice.ts'
import { send } from '../helpers/tracking.ts'
import { freshDatabase, withAdmin } from '../store/pg.ts'
import { until } from './helpers.ts'

const cleanup: (() => Promise<void>)[] = []
after(async () => {
  for (const close of cleanup.reverse()) await close()
})

/** A trigger that refuses the rows matching `when` (an SQL condition on NEW or OLD, the same in both). */
interface Refusal {
  name: string
  timing: string
  table: string
  when: string
}

interface Backend {
  name: string
  start(): Promise<{ sluice: TestSluice; refuse(refusal: Refusal): Promise<void> }>
}

const SETTINGS = { retry: { baseDelayMs: 40, maxDelayMs: 80, windowMs: 10_000 } }

const backends: Backend[] = [
  {
    name: 'sqlite',
    async start() {
      const sluice = await startTestSluice(SETTINGS)
      cleanup.push(() => sluice.destroy())
      return {
        sluice,
        async refuse({ name, timing, table, when }) {
          const db = new DatabaseSync(databasePath(sluice.dataDir), { timeout: 5_000 })
          try {
            db.exec(`CREATE TRIGGER ${name} ${timing} ON ${table} WHEN ${when}
                     BEGIN SELECT RAISE(ABORT, 'refused by the test'); END`)
          } finally {
            db.close()
          }
        },
      }
    },
  },
  {
    name: 'postgres',
    async start() {
      const database = await freshDatabase()
      const sluice = await startTestSluice({ ...SETTINGS, databaseUrl: database.url })
      cleanup.push(async () => {
        await sluice.destroy()
        await database.drop()
      })
      await withAdmin(
        (client) =>
          client.query(`CREATE FUNCTION refuse() RETURNS trigger LANGUAGE plpgsql AS $$
                        BEGIN RAISE EXCEPTION 'refused by the test'; END $$`),
        database.url,
      )
      return {
        sluice,
        async refuse({ name, timing, table, when }) {
          await withAdmin(
            (client) =>
              client.query(`CREATE TRIGGER ${name} ${timing} ON ${table} FOR EACH ROW WHEN (${when})
                            EXECUTE FUNCTION refuse()`),
            database.url,
          )
        },
      }
    },
  },
]

for (const backend of backends) {
  describe(`one bad item fails alone: ${backend.name}`, () => {
    const started = async () => {
      const { sluice, refuse } = await backend.start()
      const receiver = await startReceiver()
      cleanup.push(() => receiver.close())
      return { sluice, receiver, refuse }
    }

    test('a destination whose deliveries cannot be claimed holds up no other destination', async () => {
      const { sluice, receiver, refuse } = await started()
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
      await refuse({
        name: 'refuse_claims',
        timing: 'BEFORE UPDATE',
        table: 'deliveries',
        when: `NEW.destination_id = '${refused.id}'`,
      })
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
      const { sluice, refuse } = await started()
      await refuse({
        name: 'refuse_status',
        timing: 'BEFORE UPDATE OF status',
        table: 'regulations',
        when: `NEW.subject_ids LIKE '%stuck%'`,
      })
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
      const { sluice, refuse } = await started()
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
      await refuse({
        name: 'refuse_erasure',
        timing: 'BEFORE DELETE',
        table: 'messages',
        when: `OLD.payload LIKE '%stuck-eraser%'`,
      })
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
      const { sluice, receiver, refuse } = await started()
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
      await refuse({
        name: 'refuse_attempts',
        timing: 'BEFORE INSERT',
        table: 'attempts',
        when: `NEW.url LIKE '%/refused'`,
      })
      // Both destinations' outcomes settle together, so they share commits.
      const batch = Array.from({ length: 10 }, (_, i) => ({ type: 'track', userId: 'u', event: `E${i}` }))
      assert.equal(
        (await send(sluice.url, '/v1/batch', { batch }, { writeKey: source.writeKey })).status,
        200,
      )
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
      const { sluice, refuse } = await started()
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
      await refuse({
        name: 'refuse_profile_erasure',
        timing: 'BEFORE DELETE',
        table: 'profile_identities',
        when: `OLD.value = 'stuck-profile'`,
      })
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
}
