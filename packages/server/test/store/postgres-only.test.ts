// PostgreSQL-only behaviour: several processes (here: several store handles, each with its own pool)
// sharing one database — concurrent migrations, the dedupe race, LISTEN/NOTIFY, connection loss,
// statement timeouts — against the real PostgreSQL (see pg.ts).
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import pg from 'pg'
import type { Source } from '../../src/domain/sources.ts'
import { migrationFiles } from '../../src/store/core/migrations.ts'
import { PostgresStore } from '../../src/store/postgres/postgres-store.ts'
import { POSTGRES_MIGRATIONS_DIR } from '../../src/store/postgres/sql/migrations.ts'
import { attempt, message, outcome } from './contract.ts'
import {
  backendPid,
  freshSchema,
  openPgStore,
  pollUntil,
  TEST_DATABASE_URL,
  uniqueName,
  waitersFor,
  whileAnotherCommits,
  withAdmin,
} from './pg.ts'

const DAY = 86_400_000
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

async function until(condition: () => boolean | Promise<boolean>, timeoutMs = 5_000): Promise<boolean> {
  const end = Date.now() + timeoutMs
  while (Date.now() < end) {
    if (await condition()) return true
    await sleep(10)
  }
  return condition()
}

describe('postgres store across processes', () => {
  let schema: string
  let drop: () => Promise<void>
  const open: PostgresStore[] = []
  const handle = async (options: Parameters<typeof openPgStore>[1] = {}) => {
    const store = await openPgStore(schema, options)
    open.push(store)
    return store
  }

  /** A connection of another process, in the test's schema. */
  const connect = async () => {
    const client = new pg.Client({ connectionString: TEST_DATABASE_URL })
    await client.connect()
    await client.query(`SET search_path TO ${schema}`)
    return client
  }

  before(async () => {
    ;({ schema, drop } = await freshSchema())
  })
  after(async () => {
    for (const store of open) await store.close()
    await drop()
  })

  test('processes starting together apply each migration exactly once', async () => {
    const fresh = await freshSchema()
    try {
      const stores = Array.from(
        { length: 6 },
        () => new PostgresStore({ connectionString: TEST_DATABASE_URL, schema: fresh.schema, poolSize: 1 }),
      )
      await Promise.all(stores.map((store) => store.migrate()))
      const rows = await withAdmin(
        async (client) =>
          (await client.query(`SELECT version, name FROM ${fresh.schema}.schema_migrations ORDER BY version`))
            .rows,
      )
      assert.deepEqual(
        rows,
        migrationFiles(POSTGRES_MIGRATIONS_DIR).map((file) => ({ version: file.version, name: file.name })),
      )
      assert.equal(await stores[0]!.countMessages(), 0)
      await Promise.all(stores.map((store) => store.close()))
    } finally {
      await fresh.drop()
    }
  })

  test('two API processes never both accept the same messageId', async () => {
    const stores = [await handle(), await handle(), await handle()]
    const source = await stores[0]!.createSource({ name: 'race', enabled: true })
    await stores[0]!.createDestination({
      name: 'd',
      type: 'webhooks',
      enabled: true,
      sourceIds: [source.id],
      settings: { webhooks: [{ url: 'https://example.com/', headers: {} }], sharedSecret: null },
    })
    const accepted = new Map<string, number>()
    let sent = 0
    for (let round = 0; round < 15; round++) {
      const ids = Array.from({ length: 60 }, (_, i) => `r${round}-${i}`)
      const results = await Promise.all(
        stores.map((store, s) => {
          // Each process sees the ids in its own order (so lock orders differ) plus one id of its own.
          const mine = [...ids].sort(() => Math.random() - 0.5).concat(`r${round}-only-${s}`)
          sent += mine.length
          return store.ingest(mine.map((id) => message(source, id))).then((result) => ({ mine, result }))
        }),
      )
      for (const { mine, result } of results) {
        mine.forEach((id, i) => {
          if (result.stored[i]) accepted.set(id, (accepted.get(id) ?? 0) + 1)
        })
      }
    }
    const twice = [...accepted].filter(([, n]) => n > 1)
    assert.deepEqual(twice, [], 'no messageId accepted by two processes')
    assert.equal(accepted.size, 15 * 63)
    assert.equal(await stores[1]!.countMessages(source.id), 15 * 63)
    assert.equal(await stores[2]!.countDeliveries(), 15 * 63)
    assert.deepEqual(await stores[0]!.getSourceStats(source.id), {
      accepted: 15 * 63,
      duplicates: sent - 15 * 63,
      rejected: 0,
      suppressed: 0,
    })
  })

  test('a delivery whose message is gone (a replay racing an erasure) is deleted by the next claim, not left due', async () => {
    const store = await handle()
    const source = await store.createSource({ name: 'orphans', enabled: true })
    const settings = { webhooks: [{ url: 'https://example.com/', headers: {} }], sharedSecret: null }
    const one = await store.createDestination({
      name: 'one by one',
      type: 'webhooks',
      enabled: true,
      sourceIds: [source.id],
      settings,
    })
    const batched = await store.createDestination({
      name: 'batched',
      type: 'webhooks',
      enabled: true,
      sourceIds: [source.id],
      settings: { ...settings, batching: { maxEvents: 10, maxBytes: 500_000, maxWaitMs: 0 } },
    })
    const early = Date.now() - 60_000
    await store.ingest([message(source, 'gone-1'), message(source, 'gone-2'), message(source, 'kept')])
    // What the race leaves: the deliveries of two calls whose message rows another transaction deleted.
    const other = await connect()
    try {
      await other.query(
        "UPDATE deliveries SET next_attempt_at = $1 WHERE message_pk IN (SELECT pk FROM messages WHERE message_id LIKE 'gone-%')",
        [early],
      )
      await other.query("DELETE FROM messages WHERE message_id LIKE 'gone-%'")
    } finally {
      await other.end()
    }
    const now = Date.now()
    assert.equal(await store.nextDueAt(one.id, now), early, 'the orphans are at the head of the queue')
    // A claim of two finds only the orphans at the head: it deletes them and leases nothing.
    assert.deepEqual(await store.claimDeliveries(one.id, 2, now, 60_000), [])
    assert.ok((await store.nextDueAt(one.id, now))! > early, 'no longer due')
    const claimed = await store.claimDeliveries(one.id, 2, now, 60_000)
    assert.deepEqual(
      claimed.map((delivery) => delivery.payload.messageId),
      ['kept'],
    )
    // A batching destination's candidates do the same.
    assert.deepEqual(
      (await store.batchCandidates(batched.id, 2, now)).map((candidate) => candidate.id),
      [],
    )
    assert.equal((await store.batchCandidates(batched.id, 2, now)).length, 1)
    const reader = await connect()
    try {
      const { rows } = await reader.query<{ n: number }>(
        'SELECT count(*)::int AS n FROM deliveries WHERE destination_id = ANY ($1::text[])',
        [[one.id, batched.id]],
      )
      assert.equal(rows[0]!.n, 2, "the orphans are gone: only each destination's delivery of the kept call")
    } finally {
      await reader.end()
    }
  })

  test('a bulk replay of failed deliveries waits for a replay step of the destination, and skips what it enqueued', async () => {
    const store = await handle()
    const source = await store.createSource({ name: 'turns', enabled: true })
    const destination = await store.createDestination({
      name: 'replayed twice over',
      type: 'webhooks',
      enabled: true,
      sourceIds: [source.id],
      settings: { webhooks: [{ url: 'https://example.com/', headers: {} }], sharedSecret: null },
    })
    await store.ingest([message(source, 'once')])
    const [claimed] = await store.claimDeliveries(destination.id, 1, Date.now(), 30_000)
    await store.recordOutcomes([outcome(claimed!, { status: 'failed' })])
    // Another process's replay step, mid-transaction: it has its turn and has enqueued the call again.
    const replayed = await whileAnotherCommits(
      schema,
      [
        ["SELECT pg_advisory_xact_lock(hashtext('sluice.replay-step'), hashtext($1))", [destination.id]],
        [
          `INSERT INTO deliveries (message_pk, destination_id, status, next_attempt_at, created_at, updated_at)
           SELECT message_pk, destination_id, 'pending', $2, $2, $2 FROM deliveries WHERE id = $1`,
          [claimed!.id, Date.now()],
        ],
      ],
      () => store.replayDeliveries({ destinationId: destination.id, status: 'failed' }, Date.now()),
    )
    assert.equal(replayed, 0, 'the call has a delivery waiting: not sent a second time')
    assert.equal((await store.getDelivery(claimed!.id))?.status, 'failed')
  })

  test('a computation changed by another process while a PATCH is being written keeps both changes', async () => {
    const store = await handle()
    const source = await store.createSource({ name: 'patches', enabled: true })
    const destination = await store.createDestination({
      name: 'traits',
      type: 'webhooks',
      enabled: true,
      sourceIds: [source.id],
      settings: { webhooks: [{ url: 'https://example.com/', headers: {} }], sharedSecret: null },
    })
    const trait = (await store.createComputedTrait({
      name: 'Visits',
      key: 'visits',
      kind: 'count',
      event: 'Visit',
      property: null,
      where: [],
      withinDays: null,
      destinationIds: [],
    }))!
    // Another process's rename, committed only once the PATCH below has read the row and waits on it.
    const patched = await whileAnotherCommits(
      schema,
      [
        [
          "UPDATE computations SET name = 'Visits (renamed)', updated_at = updated_at + 1 WHERE id = $1",
          [trait.id],
        ],
      ],
      () => store.updateComputedTrait(trait.id, { destinationIds: [destination.id] }),
    )
    assert.deepEqual(
      [patched?.name, patched?.destinationIds],
      ['Visits (renamed)', [destination.id]],
      'the PATCH is applied to the renamed computation, not over it',
    )
  })

  test('a PATCH that leaves the status alone keeps the failure an evaluation recorded meanwhile', async () => {
    const store = await handle()
    const trait = (await store.createComputedTrait({
      name: 'Spend',
      key: 'spend',
      kind: 'sum',
      event: 'Order Completed',
      property: 'total',
      where: [],
      withinDays: null,
      destinationIds: [],
    }))!
    // An evaluation failing the computation (status and error, updated_at left alone).
    const patched = await whileAnotherCommits(
      schema,
      [["UPDATE computations SET status = 'failed', error = 'boom' WHERE id = $1", [trait.id]]],
      () => store.updateComputedTrait(trait.id, { name: 'Spend (renamed)' }),
    )
    assert.deepEqual(
      [patched?.name, patched?.status, patched?.error],
      ['Spend (renamed)', 'failed', 'boom'],
      'renamed, and still failed with its error',
    )
  })

  test('a key another process is committing right now: wait, then a duplicate (or accepted if it rolled back)', async () => {
    const store = await handle()
    const source = await store.createSource({ name: 'inflight', enabled: true })
    for (const outcome of ['COMMIT', 'ROLLBACK'] as const) {
      const id = `inflight-${outcome}`
      await withAdmin(async (admin) => {
        await admin.query(`SET search_path = ${schema}`)
        await admin.query('BEGIN')
        await admin.query(
          'INSERT INTO dedupe_keys (source_id, message_id, received_at) VALUES ($1, $2, $3)',
          [source.id, id, Date.now()],
        )
        const ingest = store.ingest([message(source, id), message(source, `${id}-other`)])
        await sleep(200)
        let settled = false
        void ingest.finally(() => {
          settled = true
        })
        await sleep(0)
        assert.equal(settled, false, 'the second inserter waits for the first transaction')
        await admin.query(outcome)
        assert.deepEqual((await ingest).stored, [outcome === 'ROLLBACK', true])
      })
    }
  })

  test('a statement over the timeout is rolled back and reported, never half-done', async () => {
    const store = await handle({ statementTimeoutMs: 300 })
    const source = await store.createSource({ name: 'timeout', enabled: true })
    await withAdmin(async (admin) => {
      await admin.query(`SET search_path = ${schema}`)
      await admin.query('BEGIN')
      await admin.query('INSERT INTO dedupe_keys (source_id, message_id, received_at) VALUES ($1, $2, $3)', [
        source.id,
        'held',
        Date.now(),
      ])
      await assert.rejects(store.ingest([message(source, 'free'), message(source, 'held')]), {
        code: '57014',
      })
      await admin.query('ROLLBACK')
    })
    assert.equal(await store.countMessages(source.id), 0, 'nothing of the timed-out batch is stored')
    assert.deepEqual((await store.ingest([message(source, 'free'), message(source, 'held')])).stored, [
      true,
      true,
    ])
  })

  test('a claim carried by a commit of outcomes that times out leaves the commit standing: recorded once', async () => {
    const store = await handle({ statementTimeoutMs: 300 })
    const source = await store.createSource({ name: 'carried', enabled: true })
    const destination = await store.createDestination({
      name: 'claimed with the commit',
      type: 'webhooks',
      enabled: true,
      sourceIds: [source.id],
      settings: { webhooks: [{ url: 'https://example.com/', headers: {} }], sharedSecret: null },
    })
    await store.ingest([message(source, 'first'), message(source, 'second')])
    const [claimed] = await store.claimDeliveries(destination.id, 1, Date.now(), 30_000)
    const other = claimed!.payload.messageId === 'first' ? 'second' : 'first'
    await withAdmin(async (admin) => {
      // Another process holds the messages table: the outcome commits (it does not read messages),
      // and the claim carried with it waits past the statement timeout.
      await admin.query(`SET search_path = ${schema}`)
      await admin.query('BEGIN')
      await admin.query('LOCK TABLE messages IN ACCESS EXCLUSIVE MODE')
      const carried = await store.recordOutcomes(
        [outcome(claimed!)],
        [{ destinationId: destination.id, limit: 5, now: Date.now(), leaseMs: 30_000 }],
      )
      assert.deepEqual(carried, [[]], 'the claim that failed claimed nothing; the call did not fail')
      await admin.query('ROLLBACK')
    })
    const recorded = await store.getDelivery(claimed!.id)
    assert.equal(recorded?.status, 'delivered')
    assert.equal(recorded?.attemptCount, 1, 'recorded once: the engine had no failure to record it again for')
    const next = await store.claimDeliveries(destination.id, 5, Date.now(), 30_000)
    assert.deepEqual(
      next.map((delivery) => delivery.payload.messageId),
      [other],
      'what the failed claim would have taken is claimed later',
    )
  })

  test('connections killed under the store: the failing call errors, nothing half-written, then it recovers', async () => {
    const applicationName = uniqueName('sluice_kill')
    const store = await handle({ applicationName })
    const source = await store.createSource({ name: 'kill', enabled: true })
    // Block an ingest on a held key, kill its backend mid-statement: the promise must reject.
    await withAdmin(async (admin) => {
      await admin.query(`SET search_path = ${schema}`)
      await admin.query('BEGIN')
      await admin.query('INSERT INTO dedupe_keys (source_id, message_id, received_at) VALUES ($1, $2, $3)', [
        source.id,
        'blocked',
        Date.now(),
      ])
      const ingest = store.ingest([message(source, 'a'), message(source, 'blocked')])
      const outcome = ingest.then(
        () => 'resolved',
        (error: Error) => error.message,
      )
      assert.ok(
        await until(async () => {
          const { rows } = await admin.query(
            "SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = $1 AND wait_event_type = 'Lock'",
            [applicationName],
          )
          return rows[0].n === 1
        }),
      )
      await admin.query(
        'SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1',
        [applicationName],
      )
      assert.notEqual(await outcome, 'resolved', 'a statement cut off by a lost connection is an error')
      await admin.query('ROLLBACK')
    })
    assert.equal(await store.countMessages(source.id), 0)
    // Every connection of the pool is gone; the next calls open new ones.
    let stored: boolean[] | undefined
    assert.ok(
      await until(async () => {
        stored = await store
          .ingest([message(source, 'a'), message(source, 'blocked')])
          .then((r) => r.stored)
          .catch(() => undefined)
        return stored !== undefined
      }),
    )
    assert.deepEqual(stored, [true, true])
    assert.equal(await store.ping(), true)
  })

  test('deleting a source or destination while other processes ingest and record leaves no orphans', async () => {
    const [writer, deleter] = [await handle(), await handle()]
    const settings = { webhooks: [{ url: 'https://example.com/', headers: {} }], sharedSecret: null }
    for (let round = 0; round < 6; round++) {
      const source = await writer.createSource({ name: `orphans-${round}`, enabled: true })
      const keep = await writer.createSource({ name: `keep-${round}`, enabled: true })
      const destination = await writer.createDestination({
        name: 'd',
        type: 'webhooks',
        enabled: true,
        sourceIds: [source.id, keep.id],
        settings,
      })
      let running = true
      let n = 0
      const ingesting = (async () => {
        while (running) {
          const batch = Array.from({ length: 20 }, () => n++)
          await writer
            .ingest(batch.flatMap((i) => [message(source, `o-${i}`), message(keep, `k-${i}`)]))
            .catch(() => {})
        }
      })()
      const recording = (async () => {
        while (running) {
          const claimed = await writer.claimDeliveries(destination.id, 10, Date.now(), 30_000).catch(() => [])
          await writer
            .recordOutcomes(
              claimed.map((c) => ({
                deliveryId: c.id,
                attempts: [attempt()],
                status: 'delivered' as const,
                deadLettered: false,
                nextAttemptAt: null,
                firstAttemptAt: Date.now(),
                closedUrls: [],
              })),
            )
            .catch(() => {})
          if (claimed.length === 0) await sleep(2)
        }
      })()
      try {
        await sleep(60)
        // Alternate which parent goes first.
        if (round % 2 === 0) await deleter.deleteSource(source.id)
        else await deleter.deleteDestination(destination.id)
        await sleep(60)
      } finally {
        // Even when a deletion fails: loops left running would spin on a closed store and hang the file.
        running = false
        await Promise.all([ingesting, recording])
      }
      if (round % 2 === 1) await deleter.deleteSource(source.id)
    }
    const orphans = await withAdmin(async (admin) => {
      await admin.query(`SET search_path = ${schema}`)
      const count = async (sql: string) => Number((await admin.query(sql)).rows[0].n)
      return {
        messages: await count(
          'SELECT count(*) AS n FROM messages m WHERE NOT EXISTS (SELECT 1 FROM sources s WHERE s.id = m.source_id)',
        ),
        keys: await count(
          'SELECT count(*) AS n FROM dedupe_keys k WHERE NOT EXISTS (SELECT 1 FROM sources s WHERE s.id = k.source_id)',
        ),
        deliveriesWithoutMessage: await count(
          'SELECT count(*) AS n FROM deliveries d WHERE NOT EXISTS (SELECT 1 FROM messages m WHERE m.pk = d.message_pk)',
        ),
        deliveriesWithoutDestination: await count(
          'SELECT count(*) AS n FROM deliveries d WHERE NOT EXISTS (SELECT 1 FROM destinations x WHERE x.id = d.destination_id)',
        ),
        attempts: await count(
          'SELECT count(*) AS n FROM attempts a WHERE NOT EXISTS (SELECT 1 FROM deliveries d WHERE d.id = a.delivery_id)',
        ),
      }
    })
    assert.deepEqual(orphans, {
      messages: 0,
      keys: 0,
      deliveriesWithoutMessage: 0,
      deliveriesWithoutDestination: 0,
      attempts: 0,
    })
    assert.ok((await writer.countMessages()) > 0, 'the kept sources kept their messages')
  })

  test('deleting a source or destination whose deliveries another process is recording: a deadlock is retried, not reported', async () => {
    const store = await handle()
    for (const kind of ['source', 'destination'] as const) {
      const source = await store.createSource({ name: `deadlock-${kind}`, enabled: true })
      const destination = await store.createDestination({
        name: `deadlock-${kind}`,
        type: 'webhooks',
        enabled: true,
        sourceIds: [source.id],
        settings: { webhooks: [{ url: 'https://example.com/', headers: {} }], sharedSecret: null },
      })
      await store.ingest([message(source, 'a'), message(source, 'b'), message(source, 'c')])
      const parent =
        kind === 'source'
          ? { table: 'sources', id: source.id }
          : { table: 'destinations', id: destination.id }
      // Which side PostgreSQL rolls back is made certain (see postgres-deadlocks.test.ts): a gate holds
      // the parent row at the start, so that the deletion and then the other process queue for it in
      // that order, and the deletion is the last to wait once the cycle is complete.
      const [admin, gate, observer] = await Promise.all([connect(), connect(), connect()])
      let result: { deleted: boolean } | { error: unknown }
      try {
        await admin.query("SET deadlock_timeout = '60s'")
        const [gatePid, adminPid] = [await backendPid(gate), await backendPid(admin)]
        await gate.query('BEGIN')
        await gate.query(`SELECT 1 FROM ${parent.table} WHERE id = $1 FOR UPDATE`, [parent.id])
        // Another process's outcome commit holds one of the deliveries...
        await admin.query('BEGIN')
        await admin.query(
          'SELECT id FROM deliveries WHERE destination_id = $1 ORDER BY id LIMIT 1 FOR UPDATE',
          [destination.id],
        )
        let settled: unknown
        const deleting = (
          kind === 'source' ? store.deleteSource(source.id) : store.deleteDestination(destination.id)
        ).then(
          (deleted) => (settled = { deleted }),
          (error: unknown) => (settled = { error }),
        )
        // ...the deletion queues for its parent row behind the gate...
        const [deletionPid] = await pollUntil(
          'the deletion to wait for its parent row',
          async () => (settled === undefined ? waitersFor(observer, gatePid) : [-1]),
          (pids) => pids.length > 0,
        )
        assert.ok(deletionPid !== -1, `the deletion waits for the gate; it ended: ${JSON.stringify(settled)}`)
        // ...the other process needs the parent row too, and queues behind the deletion...
        const parentLocked = admin.query(`SELECT 1 FROM ${parent.table} WHERE id = $1 FOR KEY SHARE`, [
          parent.id,
        ])
        await pollUntil(
          'the other process to queue for the parent row behind the deletion',
          () => waitersFor(observer, deletionPid!),
          (pids) => pids.includes(adminPid),
        )
        // ...the gate lets go: the deletion removes the parent row and waits for the delivery the other
        // process holds while it waits for the parent row: a cycle, which PostgreSQL breaks by aborting
        // the deletion (the last to wait). The other process then gets the row.
        await gate.query('COMMIT')
        await parentLocked
        await admin.query('ROLLBACK')
        result = await deleting
      } finally {
        for (const client of [admin, gate, observer]) await client.end()
      }
      assert.deepEqual(result, { deleted: true }, `deleting the ${kind} succeeds after the deadlock`)
      if (kind === 'source') {
        assert.equal(await store.getSource(source.id), null)
        assert.equal(await store.countMessages(source.id), 0)
      } else {
        assert.equal(await store.getDestination(destination.id), null)
        assert.equal(await store.countDeliveries({ destinationId: destination.id }), 0)
      }
    }
  })

  test('a write key rotated or a source disabled by one process stops working in the others at once', async () => {
    const [admin, api] = [await handle(), await handle()]
    const source = await admin.createSource({ name: 'keys', enabled: true })
    // The API process has the source cached (it looks the key up on every request).
    assert.equal((await api.getSourceByWriteKey(source.writeKey))?.id, source.id)
    await sleep(300) // its LISTEN connection is up: from now on lookups are cached
    assert.equal((await api.getSourceByWriteKey(source.writeKey))?.id, source.id)
    const rotated = await admin.updateSource(source.id, { rotateWriteKey: true })
    assert.ok(
      await until(async () => (await api.getSourceByWriteKey(source.writeKey)) === null, 500),
      'the old key is refused within milliseconds, not after the cache time',
    )
    assert.equal((await api.getSourceByWriteKey(rotated!.writeKey))?.enabled, true)
    await admin.updateSource(source.id, { enabled: false })
    assert.ok(
      await until(async () => (await api.getSourceByWriteKey(rotated!.writeKey))?.enabled === false, 500),
    )
    await admin.deleteSource(source.id)
    assert.ok(await until(async () => (await api.getSourceByWriteKey(rotated!.writeKey)) === null, 500))
  })

  test('watch: other processes are told about new deliveries and config changes; other schemas are not', async () => {
    const writer = await handle()
    const worker = await handle()
    const events: string[] = []
    const unwatch = await worker.watch((event) => events.push(event))
    const source = await writer.createSource({ name: 'watch', enabled: true })
    const destination = await writer.createDestination({
      name: 'd',
      type: 'webhooks',
      enabled: true,
      sourceIds: [source.id],
      settings: { webhooks: [{ url: 'https://example.com/', headers: {} }], sharedSecret: null },
    })
    assert.ok(await until(() => events.includes('config')), 'destination created → config')
    events.length = 0
    await writer.ingest([message(source, 'w1')])
    assert.ok(await until(() => events.includes('deliveries')), 'deliveries created → deliveries')
    events.length = 0
    await writer.updateDestination(destination.id, { name: 'renamed' })
    assert.ok(await until(() => events.includes('config')), 'destination updated → config')
    const [claimed] = await writer.claimDeliveries(destination.id, 1, Date.now(), 30_000)
    await writer.recordOutcomes([
      {
        deliveryId: claimed!.id,
        attempts: [attempt()],
        status: 'failed',
        deadLettered: false,
        nextAttemptAt: null,
        firstAttemptAt: Date.now(),
        closedUrls: [],
      },
    ])
    events.length = 0
    assert.equal(await writer.replayDeliveries({ ids: [claimed!.id] }, Date.now()), 1)
    assert.ok(await until(() => events.includes('deliveries')), 'replay → deliveries')
    events.length = 0
    await writer.deleteDestination(destination.id)
    assert.ok(await until(() => events.includes('config')), 'destination deleted → config')

    // A store in another schema of the same database has its own channel.
    const elsewhere = await freshSchema()
    const foreign = await openPgStore(elsewhere.schema)
    try {
      const s = await foreign.createSource({ name: 'x', enabled: true })
      await foreign.createDestination({
        name: 'x',
        type: 'webhooks',
        enabled: true,
        sourceIds: [s.id],
        settings: { webhooks: [{ url: 'https://example.com/', headers: {} }], sharedSecret: null },
      })
      await foreign.ingest([message(s, 'x')])
      events.length = 0
      await sleep(300)
      assert.deepEqual(events, [])
    } finally {
      await foreign.close()
      await elsewhere.drop()
    }
    await unwatch()
    events.length = 0
    await writer.ingest([message(source, 'after-unwatch')])
    await sleep(200)
    assert.deepEqual(events, [], 'no events after unwatch')
  })

  test('watch: a store hears its own commits once, at commit, not again through its own NOTIFY', async () => {
    const writer = await handle()
    const other = await handle()
    const own: string[] = []
    const theirs: string[] = []
    const unwatchOwn = await writer.watch((event) => own.push(event))
    const unwatchTheirs = await other.watch((event) => theirs.push(event))
    // A (re)connected LISTEN connection reports 'config' and 'deliveries' to make up for what it may
    // have missed: not part of this test.
    own.length = 0
    theirs.length = 0
    const source = await writer.createSource({ name: 'echo', enabled: true })
    await writer.createDestination({
      name: 'd',
      type: 'webhooks',
      enabled: true,
      sourceIds: [source.id],
      settings: { webhooks: [{ url: 'https://example.com/', headers: {} }], sharedSecret: null },
    })
    await writer.ingest([message(source, 'e1')])
    // `messages` is for this process's profile worker only: never published.
    assert.deepEqual(own, ['config', 'deliveries', 'messages'], 'heard at commit')
    // The NOTIFYs reach the other store; had the writer heard its own, they would arrive by now too.
    assert.ok(await until(() => theirs.includes('config') && theirs.includes('deliveries')))
    await sleep(200)
    assert.deepEqual(own, ['config', 'deliveries', 'messages'], 'and only then')
    assert.ok(!theirs.includes('messages'), 'messages is not published')
    await unwatchOwn()
    await unwatchTheirs()
  })

  test('watch: the LISTEN connection comes back by itself after it is cut, and reports missed work', async () => {
    const writer = await handle()
    const worker = await handle()
    const events: string[] = []
    const unwatch = await worker.watch((event) => events.push(event))
    const [pid] = worker.listenerPids()
    assert.ok(pid)
    await withAdmin((admin) => admin.query('SELECT pg_terminate_backend($1)', [pid]))
    assert.ok(
      await until(() => events.includes('deliveries') && events.includes('config')),
      'after reconnecting, the listener reports both events (notifications sent meanwhile were lost)',
    )
    assert.ok(await until(() => worker.listenerPids()[0] !== undefined && worker.listenerPids()[0] !== pid))
    const source: Source = await writer.createSource({ name: 'reconnect', enabled: true })
    events.length = 0
    await writer.createDestination({
      name: 'd',
      type: 'webhooks',
      enabled: true,
      sourceIds: [source.id],
      settings: { webhooks: [{ url: 'https://example.com/', headers: {} }], sharedSecret: null },
    })
    assert.ok(await until(() => events.includes('config')), 'notifications flow again')
    await unwatch()
  })

  test('U+0000 in a receiver answer or a messageId does not fail the group it is committed with', async () => {
    const store = await handle()
    const source = await store.createSource({ name: 'nul', enabled: true })
    const destination = await store.createDestination({
      name: 'd',
      type: 'webhooks',
      enabled: true,
      sourceIds: [source.id],
      settings: { webhooks: [{ url: 'https://example.com/', headers: {} }], sharedSecret: null },
    })
    const result = await store.ingest([message(source, 'a\u0000b'), message(source, 'plain')])
    assert.deepEqual(result.stored, [true, true])
    const claimed = await store.claimDeliveries(destination.id, 10, Date.now(), 30_000)
    await store.recordOutcomes(
      claimed.map((c) => ({
        deliveryId: c.id,
        attempts: [
          attempt({
            statusCode: 500,
            errorKind: 'http',
            errorText: 'bad\u0000',
            responseExcerpt: '\u0000\u0001',
          }),
        ],
        status: 'failed' as const,
        deadLettered: false,
        nextAttemptAt: null,
        firstAttemptAt: Date.now(),
        closedUrls: [],
      })),
    )
    const stats = await store.deliveryStats(destination.id)
    assert.equal(stats.failed, 2)
    const [delivery] = await store.listDeliveries(destination.id, { limit: 1 })
    assert.equal(delivery?.attempts[0]?.responseExcerpt, '\uFFFD\u0001')
  })

  test('large batches: 2,500 messages in one ingest, 2,500 outcomes in one record', async () => {
    const store = await handle()
    const source = await store.createSource({ name: 'big', enabled: true })
    const destination = await store.createDestination({
      name: 'd',
      type: 'webhooks',
      enabled: true,
      sourceIds: [source.id],
      settings: { webhooks: [{ url: 'https://example.com/', headers: {} }], sharedSecret: null },
    })
    const messages = Array.from({ length: 2_500 }, (_, i) => message(source, `big-${i}`))
    const result = await store.ingest(messages)
    assert.equal(result.stored.filter(Boolean).length, 2_500)
    assert.equal(result.deliveriesCreated, 2_500)
    const claimed = await store.claimDeliveries(destination.id, 2_500, Date.now(), 30_000)
    assert.equal(claimed.length, 2_500)
    await store.recordOutcomes(
      claimed.map((c) => ({
        deliveryId: c.id,
        attempts: [attempt()],
        status: 'delivered' as const,
        deadLettered: false,
        nextAttemptAt: null,
        firstAttemptAt: Date.now(),
        closedUrls: [],
      })),
    )
    assert.equal(await store.countDeliveries({ destinationId: destination.id, status: 'delivered' }), 2_500)
  })

  test('sweep: dedupe keys expire after the window; concurrent sweeps from several processes are safe', async () => {
    const a = await handle({ dedupeWindowMs: 60_000 })
    const b = await handle({ dedupeWindowMs: 60_000 })
    const source = await a.createSource({ name: 'sweep', enabled: true })
    const now = Date.now()
    await a.ingest([
      message(source, 'expired', { receivedAt: now - 120_000 }),
      message(source, 'live', { receivedAt: now }),
    ])
    const keys = () =>
      withAdmin(async (admin) =>
        (
          await admin.query(`SELECT message_id FROM ${schema}.dedupe_keys WHERE source_id = $1 ORDER BY 1`, [
            source.id,
          ])
        ).rows.map((row: { message_id: string }) => row.message_id),
      )
    assert.deepEqual(await keys(), ['expired', 'live'])
    const results = await Promise.all([
      a.sweep(now - 30 * DAY),
      b.sweep(now - 30 * DAY),
      a.sweep(now - 30 * DAY),
    ])
    assert.deepEqual(
      results.map((r) => r.messages),
      [0, 0, 0],
    )
    assert.deepEqual(await keys(), ['live'], 'only the key past the window is gone')
    assert.equal(await a.countMessages(source.id), 2, 'messages stay for the retention period')
    assert.deepEqual((await b.ingest([message(source, 'live'), message(source, 'expired')])).stored, [
      false,
      true,
    ])
  })
})
