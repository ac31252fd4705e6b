-- 001: sources, destinations, accepted messages, dedupe keys, deliveries and attempts (PostgreSQL).
-- Same model as the SQLite store's 001_init.sql, adapted for several processes sharing one database.
-- Times are epoch milliseconds (BIGINT). Surrogate keys are BIGSERIAL.
--
-- NO FOREIGN KEYS on the high-volume tables (messages, dedupe_keys, deliveries, attempts). An FK is
-- checked row by row (one internal query and one parent-row lock per inserted row); measured, that
-- doubled the cost of ingest. The store keeps these relations itself, and this is where that matters:
-- - ingest locks each source and each target destination once per statement (FOR KEY SHARE, the lock an
--   FK check would take per row) and inserts nothing for a source or destination that no longer exists;
-- - deleteSource / deleteDestination take the parent row first (waiting for in-flight ingests), then
--   delete the children explicitly in the same transaction;
-- - sweep deletes messages together with their deliveries and attempts in one statement.
-- Low-volume relations (connections, counters) keep their FKs.

CREATE TABLE sources (
  id          TEXT PRIMARY KEY,
  name        TEXT NOT NULL,
  write_key   TEXT NOT NULL UNIQUE,
  enabled     BOOLEAN NOT NULL DEFAULT true,
  created_at  BIGINT NOT NULL
);

-- Per-source counters, split into shards. Every ingest transaction adds to them; with a single row per
-- source, concurrent ingest transactions from several API processes would queue on that row's lock
-- (held through each commit's WAL flush). Each transaction picks a shard at random; readers sum them.
CREATE TABLE source_counters (
  source_id   TEXT NOT NULL REFERENCES sources(id) ON DELETE CASCADE,
  shard       SMALLINT NOT NULL,
  accepted    BIGINT NOT NULL DEFAULT 0,
  duplicates  BIGINT NOT NULL DEFAULT 0,
  rejected    BIGINT NOT NULL DEFAULT 0,
  PRIMARY KEY (source_id, shard)
);

CREATE TABLE destinations (
  id          TEXT PRIMARY KEY,
  name        TEXT NOT NULL,
  type        TEXT NOT NULL,
  enabled     BOOLEAN NOT NULL DEFAULT true,
  settings    TEXT NOT NULL,          -- JSON: {webhooks: [{url, headers}], sharedSecret}
  created_at  BIGINT NOT NULL,
  updated_at  BIGINT NOT NULL
);

CREATE TABLE destination_sources (
  destination_id TEXT NOT NULL REFERENCES destinations(id) ON DELETE CASCADE,
  source_id      TEXT NOT NULL REFERENCES sources(id) ON DELETE CASCADE,
  PRIMARY KEY (destination_id, source_id)
);
CREATE INDEX destination_sources_by_source ON destination_sources (source_id);

-- Accepted messages. The payload is TEXT, not JSONB: it is the exact JSON the Tracking API serialized,
-- stored and read back byte for byte, never queried inside; JSONB would parse it on every insert and
-- re-serialize it (reordering keys) on every read.
CREATE TABLE messages (
  pk          BIGSERIAL PRIMARY KEY,
  source_id   TEXT NOT NULL,          -- sources(id); deleted with the source by the store
  message_id  TEXT NOT NULL,
  type        TEXT NOT NULL,
  received_at BIGINT NOT NULL,
  payload     TEXT NOT NULL
);
CREATE INDEX messages_by_source_message ON messages (source_id, message_id);

-- The dedupe rule across processes. SQLite has one writer and looks messageIds up among stored
-- messages; here several API processes commit concurrently, so a lookup could miss a key another
-- transaction is inserting at the same moment. The primary key makes PostgreSQL itself the arbiter:
-- the second inserter of a key waits for the first to commit, then sees the conflict. A key whose
-- received_at is older than the window is expired and is taken over (ON CONFLICT ... DO UPDATE WHERE).
CREATE TABLE dedupe_keys (
  source_id   TEXT NOT NULL,          -- sources(id); deleted with the source by the store
  message_id  TEXT NOT NULL,
  received_at BIGINT NOT NULL,
  PRIMARY KEY (source_id, message_id)
);
CREATE INDEX dedupe_keys_by_time ON dedupe_keys (received_at);   -- expiry sweeps

-- One row per (message, destination). Workers claim due rows with FOR UPDATE SKIP LOCKED and set
-- lease_until; a row whose lease has passed is claimable again (its worker died). fillfactor leaves
-- room in each page so the claim's update (lease_until only, no indexed column) can be a HOT update.
CREATE TABLE deliveries (
  id               BIGSERIAL PRIMARY KEY,
  message_pk       BIGINT NOT NULL,  -- messages(pk); deleted with the message (sweep, deleteSource)
  destination_id   TEXT NOT NULL,    -- destinations(id); deleted with the destination
  status           TEXT NOT NULL DEFAULT 'pending',  -- pending | retrying | delivered | failed
  dead_lettered    BOOLEAN NOT NULL DEFAULT false,   -- failed because the retry window ran out
  attempt_count    INTEGER NOT NULL DEFAULT 0,
  next_attempt_at  BIGINT NOT NULL,
  first_attempt_at BIGINT,
  lease_until      BIGINT,
  closed_urls      TEXT,                             -- JSON array of URLs answered with a final non-2xx
  created_at       BIGINT NOT NULL,
  updated_at       BIGINT NOT NULL
) WITH (fillfactor = 80);
-- Claims go destination by destination, oldest due first.
CREATE INDEX deliveries_due ON deliveries (destination_id, next_attempt_at, id)
  WHERE status IN ('pending', 'retrying');
CREATE INDEX deliveries_by_destination_status ON deliveries (destination_id, status, id);
CREATE INDEX deliveries_by_message ON deliveries (message_pk);

CREATE TABLE attempts (
  id               BIGSERIAL PRIMARY KEY,
  delivery_id      BIGINT NOT NULL,   -- deliveries(id); deleted with the delivery
  destination_id   TEXT NOT NULL,     -- copied from the delivery: latency figures per destination
  attempted_at     BIGINT NOT NULL,
  url              TEXT NOT NULL,
  status_code      INTEGER,
  error_kind       TEXT,              -- timeout | connect | tls | ssrf | redirect | http | ...
  error_text       TEXT,
  latency_ms       INTEGER NOT NULL,
  response_excerpt TEXT               -- at most 1 KB
);
CREATE INDEX attempts_by_delivery ON attempts (delivery_id);
CREATE INDEX attempts_by_destination ON attempts (destination_id, id);
