/**
 * Cross-process wake-ups over LISTEN/NOTIFY. They only make delivery faster: every worker also polls,
 * so a lost notification (connection drop, PostgreSQL restart) delays work by at most one poll.
 */
import pg, { type ClientConfig, type Pool } from 'pg'
import type { StoreLogger } from './connection.ts'

/** What the engine hears (Store.watch). */
export type StoreEvent = 'deliveries' | 'config'
/** Everything sent on the channel: `sources` tells other processes to drop their write-key caches. */
export type ChannelEvent = StoreEvent | 'sources'
const EVENTS: readonly string[] = ['deliveries', 'config', 'sources'] satisfies ChannelEvent[]

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
export class Notifier {
  private readonly pool: Pool
  private readonly channel: () => Promise<string>
  private readonly logger: StoreLogger
  private readonly sending = new Map<ChannelEvent, Promise<void>>()
  private readonly again = new Set<ChannelEvent>()

  constructor(pool: Pool, channel: () => Promise<string>, logger: StoreLogger) {
    this.pool = pool
    this.channel = channel
    this.logger = logger
  }

  notify(event: ChannelEvent): void {
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

  private async send(event: ChannelEvent): Promise<void> {
    try {
      await this.pool.query('SELECT pg_notify($1, $2)', [await this.channel(), event])
    } catch (error) {
      this.logger.warn(
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
export class Listener {
  private readonly config: ClientConfig
  private readonly channel: () => Promise<string>
  private readonly onEvent: (event: ChannelEvent) => void
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
    onEvent: (event: ChannelEvent) => void
    onState: (connected: boolean) => void
    logger: StoreLogger
  }) {
    this.config = options.config
    this.channel = options.channel
    this.onEvent = options.onEvent
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
      if (message.payload && EVENTS.includes(message.payload)) this.onEvent(message.payload as ChannelEvent)
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
