-- 001: sources, destinations, accepted messages, deliveries and attempts.
-- Times are epoch milliseconds. Booleans are 0/1. SQL kept portable where it can be.

CREATE TABLE sources (
  id          TEXT PRIMARY KEY,
  name        TEXT NOT NULL,
  write_key   TEXT NOT NULL UNIQUE,
  enabled     INTEGER NOT NULL DEFAULT 1,
  created_at  INTEGER NOT NULL,
  accepted_count   INTEGER NOT NULL DEFAULT 0,
  duplicate_count  INTEGER NOT NULL DEFAULT 0,
  rejected_count   INTEGER NOT NULL DEFAULT 0
);

CREATE TABLE destinations (
  id          TEXT PRIMARY KEY,
  name        TEXT NOT NULL,
  type        TEXT NOT NULL,
  enabled     INTEGER NOT NULL DEFAULT 1,
  settings    TEXT NOT NULL,          -- JSON: {webhooks: [{url, headers}], sharedSecret}
  created_at  INTEGER NOT NULL,
  updated_at  INTEGER NOT NULL
);

CREATE TABLE destination_sources (
  destination_id TEXT NOT NULL REFERENCES destinations(id) ON DELETE CASCADE,
  source_id      TEXT NOT NULL REFERENCES sources(id) ON DELETE CASCADE,
  PRIMARY KEY (destination_id, source_id)
);
CREATE INDEX destination_sources_by_source ON destination_sources (source_id);

-- Accepted messages. The (source_id, message_id, received_at) index also serves the dedupe rule: a
-- messageId already received from the source inside the window is dropped. Retention (SLUICE_RETENTION_DAYS)
-- is never shorter than the dedupe window, so the rows the rule needs are always here. pk grows with
-- received_at, so retention sweeps walk pk order and need no time index.
CREATE TABLE messages (
  pk          INTEGER PRIMARY KEY AUTOINCREMENT,
  source_id   TEXT NOT NULL REFERENCES sources(id) ON DELETE CASCADE,
  message_id  TEXT NOT NULL,
  type        TEXT NOT NULL,
  received_at INTEGER NOT NULL,
  payload     TEXT NOT NULL           -- the enriched message, JSON
);
CREATE INDEX messages_by_source_message ON messages (source_id, message_id, received_at);

-- One row per (message, destination). The delivery engine claims due rows by setting lease_until;
-- a row whose lease has passed is claimable again (its worker died).
CREATE TABLE deliveries (
  id              INTEGER PRIMARY KEY AUTOINCREMENT,
  message_pk      INTEGER NOT NULL REFERENCES messages(pk) ON DELETE CASCADE,
  destination_id  TEXT NOT NULL REFERENCES destinations(id) ON DELETE CASCADE,
  status          TEXT NOT NULL DEFAULT 'pending',  -- pending | retrying | delivered | failed
  dead_lettered   INTEGER NOT NULL DEFAULT 0,       -- failed because the retry window ran out
  attempt_count   INTEGER NOT NULL DEFAULT 0,
  next_attempt_at INTEGER NOT NULL,
  first_attempt_at INTEGER,
  lease_until     INTEGER,
  closed_urls     TEXT,                             -- JSON array of URLs answered with a final non-2xx
  created_at      INTEGER NOT NULL,
  updated_at      INTEGER NOT NULL
);
-- Claims go destination by destination (so one slow endpoint's backlog never stands in front of
-- another's), oldest due first.
CREATE INDEX deliveries_due ON deliveries (destination_id, next_attempt_at) WHERE status IN ('pending', 'retrying');
CREATE INDEX deliveries_by_destination_status ON deliveries (destination_id, status, id);
CREATE INDEX deliveries_by_message ON deliveries (message_pk);

CREATE TABLE attempts (
  id              INTEGER PRIMARY KEY AUTOINCREMENT,
  delivery_id     INTEGER NOT NULL REFERENCES deliveries(id) ON DELETE CASCADE,
  destination_id  TEXT NOT NULL,      -- copied from the delivery: latency figures per destination
  attempted_at    INTEGER NOT NULL,
  url             TEXT NOT NULL,
  status_code     INTEGER,
  error_kind      TEXT,               -- timeout | connect | tls | ssrf | redirect | http | ...
  error_text      TEXT,
  latency_ms      INTEGER NOT NULL,
  response_excerpt TEXT               -- at most 1 KB
);
CREATE INDEX attempts_by_delivery ON attempts (delivery_id);
CREATE INDEX attempts_by_destination ON attempts (destination_id, id);
