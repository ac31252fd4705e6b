/**
 * Shared by the profile and computed-trait store tests: the backends (in-thread SQLite, SQLite on its
 * worker thread, PostgreSQL in a fresh schema), a call builder, and draining the profile worker's steps.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { DatabaseSync } from 'node:sqlite'
import { test } from 'node:test'
import type { Destination } from '../../src/domain/destinations.ts'
import type { AcceptedMessage } from '../../src/domain/message-store.ts'
import type { Source } from '../../src/domain/sources.ts'
import { databasePath } from '../../src/store/sqlite/database.ts'
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.ts'
import { ThreadedSqliteStore } from '../../src/store/sqlite/threaded-store.ts'
import type { Store } from '../../src/store/store.ts'
import { freshSchema, openPgStore, withAdmin } from './pg.ts'

export interface Opened {
  store: Store
  second(): Promise<Store>
  cleanup(): Promise<void>
  /** Runs SQL on the store's database beside the store (a separate connection); returns rows changed. */
  beside(sql: string): Promise<number>
}

export const backends: { name: string; open(): Promise<Opened> }[] = [
  ...[
    { name: 'sqlite', create: (dataDir: string) => new SqliteStore({ dataDir, synchronous: 'NORMAL' }) },
    {
      name: 'sqlite on its worker thread',
      create: (dataDir: string) => new ThreadedSqliteStore({ dataDir, synchronous: 'NORMAL' }),
    },
  ].map(({ name, create }) => ({
    name,
    async open(): Promise<Opened> {
      const dataDir = await mkdtemp(join(tmpdir(), 'sluice-profiles-'))
      const store = create(dataDir)
      await store.migrate()
      return {
        store,
        beside: async (sql) => {
          const db = new DatabaseSync(databasePath(dataDir))
          try {
            return Number(db.prepare(sql).run().changes)
          } finally {
            db.close()
          }
        },
        // One process owns a SQLite file: a second handle is the same store.
        second: async () => store,
        async cleanup() {
          await store.close()
          await rm(dataDir, { recursive: true, force: true })
        },
      }
    },
  })),
  {
    name: 'postgres',
    async open(): Promise<Opened> {
      const { schema, drop } = await freshSchema()
      const handles: Store[] = [await openPgStore(schema)]
      return {
        store: handles[0]!,
        beside: (sql) =>
          withAdmin(async (client) => {
            await client.query(`SET search_path TO ${schema}`)
            return (await client.query(sql)).rowCount ?? 0
          }),
        async second() {
          const other = await openPgStore(schema)
          handles.push(other)
          return other
        },
        async cleanup() {
          for (const handle of handles) await handle.close()
          await drop()
        },
      }
    },
  },
]

let counter = 0
/** An accepted call; `timestamp` in ms (default: now). */
export function call(
  source: Source,
  fields: Record<string, unknown>,
  timestamp = Date.now(),
): AcceptedMessage {
  const messageId = `m-${++counter}`
  const payload = { type: 'track', messageId, timestamp: new Date(timestamp).toISOString(), ...fields }
  return {
    sourceId: source.id,
    messageId,
    type: payload.type as AcceptedMessage['type'],
    receivedAt: Date.now(),
    routeTo: ['webhooks'],
    payloadJson: JSON.stringify(payload),
  }
}

/** Consumes everything there is. */
export async function drain(store: Store): Promise<number> {
  let total = 0
  for (
    let consumed = await store.consumeIntoProfiles();
    consumed > 0;
    consumed = await store.consumeIntoProfiles()
  ) {
    total += consumed
  }
  return total
}

/** Runs the profile worker's steps until nothing is left: consume, then evaluate (at `now`). */
export async function settle(store: Store, now = Date.now()): Promise<number> {
  await drain(store)
  let deliveries = 0
  for (;;) {
    const { evaluated, deliveriesCreated } = await store.evaluateComputations(500, now)
    deliveries += deliveriesCreated
    if (evaluated === 0) return deliveries
  }
}

/**
 * What every profile test starts from: a source, and a webhooks destination connected to no source
 * (computations are connected to it by id).
 */
export async function sourceAndHook(store: Store): Promise<{ source: Source; destination: Destination }> {
  const source = await store.createSource({ name: 'web', enabled: true })
  const destination = await store.createDestination({
    name: 'hook',
    type: 'webhooks',
    enabled: true,
    sourceIds: [],
    settings: { webhooks: [{ url: 'http://127.0.0.1:9/hook', headers: {} }], sharedSecret: null },
  })
  return { source, destination }
}

/** A test on `backend` from `sourceAndHook`. The store is cleaned up after. */
export function profileTest(
  backend: (typeof backends)[number],
  name: string,
  body: (opened: Opened, source: Source, destination: Destination) => Promise<void>,
): void {
  test(name, async () => {
    const opened = await backend.open()
    try {
      const { source, destination } = await sourceAndHook(opened.store)
      await body(opened, source, destination)
    } finally {
      await opened.cleanup()
    }
  })
}

/** The payloads of every sync identify enqueued for `destination` so far, oldest first. */
export async function syncPayloads(store: Store, destination: Destination): Promise<Record<string, any>[]> {
  const deliveries = await store.listDeliveries(destination.id, { limit: 1000 })
  const payloads: Record<string, any>[] = []
  for (const delivery of deliveries.toReversed()) {
    payloads.push((await store.getMessage(delivery.sourceId, delivery.messageId))!.payload)
  }
  return payloads
}
