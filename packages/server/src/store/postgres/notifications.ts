/**
 * Change announcements between processes, over LISTEN/NOTIFY on one channel per schema. They only make
 * delivery faster and write-key caches fresher: every worker also polls, so a lost notification
 * (connection drop, PostgreSQL restart) delays work by at most one poll, and a process caches write keys
 * only while its LISTEN connection is up.
 */
import { createHash, randomBytes } from 'node:crypto'
import pg, { type ClientConfig } from 'pg'
import { CHANGE_EVENTS, type ChangeEvent } from '../core/changes.ts'
import { clientConfig, type StoreLogger } from './connection.ts'
import type { PostgresDatabase } from './database.ts'

/**
 * A notification's payload: the event, then the store that sent it. The listening connection hears
 * its own store's NOTIFYs too; those were already told to this process's listeners at commit, so they
 * are recognized by their origin and dropped. (A payload without an origin, from an older Sluice, is
 * taken as another process's.)
 */
function encode(event: ChangeEvent, origin: string): string {
  return `${event}:${origin}`
}

function decode(payload: string, ownOrigin: string): ChangeEvent | null {
  const [event = '', origin] = payload.split(':', 2)
  if (origin === ownOrigin || !(CHANGE_EVENTS as readonly string[]).includes(event)) return null
  return event as ChangeEvent
}

/**
 * The store's NOTIFY channel: a sender (`publish`) and, started on first use, one listening connection
 * that reports what other processes announce. One per store, whoever needs it: the delivery engine
 * (`watch`) and the write-key cache share it.
 */
export class ChangeChannel {
  private readonly db: PostgresDatabase
  /** Tells this store's own notifications apart from other processes'. */
  private readonly origin = randomBytes(6).toString('base64url')
  private readonly notifier: Notifier
  private name: Promise<string> | undefined
  private listener: Listener | null = null
  private listening: Promise<void> | null = null
  private closed = false

  constructor(db: PostgresDatabase) {
    this.db = db
    this.notifier = new Notifier(db, () => this.channel(), this.origin)
  }

  /** Announces a change this process committed to the other processes (coalesced; see Notifier). */
  publish(event: ChangeEvent): void {
    if (!this.closed) this.notifier.notify(event)
  }

  /**
   * Starts listening, once: `onEvent` for every announcement heard from another process, `onState` on
   * every connection and loss. Resolves after the first connection attempt, successful or not (later
   * ones run on their own).
   */
  listen(handlers: {
    onEvent: (event: ChangeEvent) => void
    onState: (connected: boolean) => void
  }): Promise<void> {
    if (this.closed) return Promise.resolve()
    if (!this.listening) {
      this.listener = new Listener({
        config: clientConfig(this.db.options),
        channel: () => this.channel(),
        onNotification: (payload) => {
          const event = decode(payload, this.origin)
          if (event !== null) handlers.onEvent(event)
        },
        onState: handlers.onState,
        logger: this.db.logger,
      })
      this.listening = this.listener.start()
    }
    return this.listening
  }

  /** The backend process id of the listening connection, or null (for tests). */
  get listenerPid(): number | null {
    return this.listener?.backendPid ?? null
  }

  /** Stops listening and waits for notifications being sent (before the pool closes). */
  async close(): Promise<void> {
    this.closed = true
    await this.listener?.stop()
    await this.notifier.idle()
  }

  /** Per schema, so stores in different schemas of one database don't wake each other. */
  private channel(): Promise<string> {
    this.name ??= this.db
      .query<{ schema: string | null }>('SELECT current_schema() AS schema')
      .then((rows) => {
        const channel = `sluice_${rows[0]?.schema ?? 'public'}`
        // Channel names are identifiers: at most 63 bytes.
        return Buffer.byteLength(channel) <= 63
          ? channel
          : `sluice_${createHash('sha1').update(channel).digest('hex')}`
      })
      .catch((error: unknown) => {
        this.name = undefined
        throw error
      })
    return this.name
  }
}

/**
 * Sends NOTIFYs after commits, coalesced: at most one per event in flight, plus one more if commits
 * happened meanwhile. Every commit is therefore followed by a notification sent after it, without a
 * NOTIFY per commit.
 *
 * Deliberately NOT sent inside the writing transaction: PostgreSQL serializes the commits of
 * transactions that NOTIFY (a database-wide lock held through the commit's WAL flush), which would undo
 * the group commit of every API process. A notification-only transaction writes no WAL of its own and
 * is cheap.
 */
class Notifier {
  private readonly db: PostgresDatabase
  private readonly channel: () => Promise<string>
  private readonly origin: string
  private readonly sending = new Map<ChangeEvent, Promise<void>>()
  private readonly again = new Set<ChangeEvent>()

  constructor(db: PostgresDatabase, channel: () => Promise<string>, origin: string) {
    this.db = db
    this.channel = channel
    this.origin = origin
  }

  notify(event: ChangeEvent): void {
    if (this.sending.has(event)) {
      this.again.add(event)
      return
    }
    const sent = this.send(event).finally(() => {
      this.sending.delete(event)
      if (this.again.delete(event)) this.notify(event)
    })
    this.sending.set(event, sent)
  }

  /** Resolves when no notification is being sent (before the pool closes). */
  async idle(): Promise<void> {
    while (this.sending.size > 0) await Promise.all(this.sending.values())
  }

  private async send(event: ChangeEvent): Promise<void> {
    try {
      await this.db.query('SELECT pg_notify($1, $2)', [await this.channel(), encode(event, this.origin)])
    } catch (error) {
      this.db.logger.warn(
        { err: error, event },
        'postgres: NOTIFY failed; other processes will find the work by polling',
      )
    }
  }
}

const MIN_BACKOFF_MS = 100
const MAX_BACKOFF_MS = 5_000

/**
 * One dedicated connection (never from the pool: a pooled connection would be handed to other work and
 * lose its LISTEN) that listens on the store's channel, and reconnects with backoff when it drops.
 * Notifications sent while it is away are lost: `onState(true)` after each (re)connection lets the
 * owner make up for them.
 */
class Listener {
  private readonly config: ClientConfig
  private readonly channel: () => Promise<string>
  private readonly onNotification: (payload: string) => void
  private readonly onState: (connected: boolean) => void
  private readonly logger: StoreLogger
  private client: pg.Client | null = null
  private stopped = false
  private failures = 0
  private retry: NodeJS.Timeout | undefined
  private connecting: Promise<void> | null = null

  constructor(options: {
    config: ClientConfig
    channel: () => Promise<string>
    onNotification: (payload: string) => void
    onState: (connected: boolean) => void
    logger: StoreLogger
  }) {
    this.config = options.config
    this.channel = options.channel
    this.onNotification = options.onNotification
    this.onState = options.onState
    this.logger = options.logger
  }

  /** Resolves after the first connection attempt, successful or not (later attempts run on their own). */
  async start(): Promise<void> {
    this.connecting = this.connect()
    await this.connecting
  }

  async stop(): Promise<void> {
    this.stopped = true
    clearTimeout(this.retry)
    await this.connecting
    const client = this.client
    this.client = null
    if (client) this.onState(false)
    await client?.end().catch(() => {})
  }

  /** The backend process id of the listening connection, or null while disconnected (for tests). */
  get backendPid(): number | null {
    return (this.client as unknown as { processID?: number } | null)?.processID ?? null
  }

  private async connect(): Promise<void> {
    const client = new pg.Client(this.config)
    let lost = false
    const onLost = (error?: Error) => {
      if (lost) return
      lost = true
      if (this.client === client) {
        this.client = null
        this.onState(false)
      }
      client.end().catch(() => {})
      if (this.stopped) return
      this.logger.warn({ err: error }, 'postgres: LISTEN connection lost; reconnecting')
      this.scheduleReconnect()
    }
    // An 'error' event without a listener would crash the process; a dropped connection is expected.
    client.on('error', onLost)
    client.on('end', () => onLost())
    client.on('notification', (message) => {
      if (message.payload) this.onNotification(message.payload)
    })
    try {
      await client.connect()
      await client.query(`LISTEN ${client.escapeIdentifier(await this.channel())}`)
    } catch (error) {
      if (!lost) {
        lost = true
        client.end().catch(() => {})
        if (!this.stopped) {
          this.logger.warn({ err: error }, 'postgres: cannot LISTEN; retrying')
          this.scheduleReconnect()
        }
      }
      return
    }
    if (this.stopped || lost) {
      await client.end().catch(() => {})
      return
    }
    this.client = client
    if (this.failures > 0) this.logger.info({ after: this.failures }, 'postgres: LISTEN connection restored')
    this.failures = 0
    this.onState(true)
  }

  private scheduleReconnect(): void {
    this.failures++
    const ceiling = Math.min(MAX_BACKOFF_MS, MIN_BACKOFF_MS * 2 ** (this.failures - 1))
    const delay = ceiling / 2 + Math.random() * (ceiling / 2)
    clearTimeout(this.retry)
    this.retry = setTimeout(() => {
      this.connecting = this.connect()
    }, delay)
    this.retry.unref()
  }
}
