-- 011: batches, for destinations that send several messages per request (settings.batching).
-- A batch is attempted, retried, dead-lettered and replayed as a unit: its state lives here and is
-- copied onto its members' delivery rows in the same transaction, so listings, counts and statistics
-- read deliveries as before. A delivery joins at most one batch (batch_id is set once, under the
-- condition that it was NULL, on rows locked FOR UPDATE). Classic claims skip rows with a batch_id.
-- No FKs, as for deliveries (001_init.sql): removed with their destination, and by the sweep.
CREATE TABLE delivery_batches (
  id               BIGSERIAL PRIMARY KEY,
  destination_id   TEXT NOT NULL,
  status           TEXT NOT NULL DEFAULT 'pending',  -- pending | retrying | delivered | failed
  dead_lettered    BOOLEAN NOT NULL DEFAULT false,
  attempt_count    INTEGER NOT NULL DEFAULT 0,
  next_attempt_at  BIGINT NOT NULL,
  first_attempt_at BIGINT,
  closed_urls      TEXT,
  lease_until      BIGINT,
  created_at       BIGINT NOT NULL,
  updated_at       BIGINT NOT NULL
);
CREATE INDEX delivery_batches_due ON delivery_batches (destination_id, next_attempt_at) WHERE status IN ('pending', 'retrying');

-- One row per request of a batch attempt, to one URL (as attempts, for a batch).
CREATE TABLE batch_attempts (
  id               BIGSERIAL PRIMARY KEY,
  batch_id         BIGINT NOT NULL,
  destination_id   TEXT NOT NULL,
  attempted_at     BIGINT NOT NULL,
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

ALTER TABLE deliveries ADD COLUMN batch_id BIGINT;
CREATE INDEX deliveries_by_batch ON deliveries (batch_id) WHERE batch_id IS NOT NULL;
