-- 009: batches, for destinations that send several messages per request (settings.batching).
-- A batch is attempted, retried, dead-lettered and replayed as a unit: its state lives here and is
-- copied onto its members' delivery rows in the same transaction, so listings, counts and statistics
-- read deliveries as before. A delivery joins at most one batch (batch_id is set once, under the
-- condition that it was NULL). Classic claims skip rows with a batch_id.
CREATE TABLE delivery_batches (
  id               INTEGER PRIMARY KEY AUTOINCREMENT,
  destination_id   TEXT NOT NULL REFERENCES destinations(id) ON DELETE CASCADE,
  status           TEXT NOT NULL DEFAULT 'pending',  -- pending | retrying | delivered | failed
  dead_lettered    INTEGER NOT NULL DEFAULT 0,
  attempt_count    INTEGER NOT NULL DEFAULT 0,
  next_attempt_at  INTEGER NOT NULL,
  first_attempt_at INTEGER,
  closed_urls      TEXT,
  lease_until      INTEGER,
  created_at       INTEGER NOT NULL,
  updated_at       INTEGER NOT NULL
);
CREATE INDEX delivery_batches_due ON delivery_batches (destination_id, next_attempt_at) WHERE status IN ('pending', 'retrying');

-- One row per request of a batch attempt, to one URL (as attempts, for a batch).
CREATE TABLE batch_attempts (
  id               INTEGER PRIMARY KEY AUTOINCREMENT,
  batch_id         INTEGER NOT NULL REFERENCES delivery_batches(id) ON DELETE CASCADE,
  destination_id   TEXT NOT NULL,
  attempted_at     INTEGER NOT NULL,
  url              TEXT NOT NULL,
  status_code      INTEGER,
  error_kind       TEXT,
  error_text       TEXT,
  latency_ms       INTEGER NOT NULL,
  response_excerpt TEXT
);
CREATE INDEX batch_attempts_by_batch ON batch_attempts (batch_id);
CREATE INDEX batch_attempts_by_destination ON batch_attempts (destination_id, id);  -- latency figures
CREATE INDEX batch_attempts_by_time ON batch_attempts (attempted_at);               -- per-minute roll-ups

ALTER TABLE deliveries ADD COLUMN batch_id INTEGER;
CREATE INDEX deliveries_by_batch ON deliveries (batch_id) WHERE batch_id IS NOT NULL;
