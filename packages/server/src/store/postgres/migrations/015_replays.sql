-- 015: replays of stored calls to a destination (docs/webhooks.md, "Replay and backfill").
-- A replay walks its window in (received_at, pk) order; its cursor and counters move in the same
-- transaction that creates the deliveries of each step, so a crash never loses or repeats a step.
-- One process runs a replay at a time: it holds the lease (runner, lease_until) and renews it.
CREATE TABLE replays (
  id             TEXT PRIMARY KEY,
  destination_id TEXT NOT NULL REFERENCES destinations(id) ON DELETE CASCADE,
  source_ids     TEXT NOT NULL,            -- JSON array
  from_at        BIGINT NOT NULL,
  to_at          BIGINT NOT NULL,
  types          TEXT,                     -- JSON array, or NULL for every type
  events         TEXT,                     -- JSON array, or NULL for every event
  forced         BOOLEAN NOT NULL DEFAULT false,
  status         TEXT NOT NULL DEFAULT 'RUNNING',  -- RUNNING | FINISHED | CANCELLED | FAILED
  scan_done      BOOLEAN NOT NULL DEFAULT false,   -- every call of the window was read
  cursor_at      BIGINT NOT NULL,
  cursor_pk      BIGINT NOT NULL DEFAULT 0,
  scanned        BIGINT NOT NULL DEFAULT 0,
  matched        BIGINT NOT NULL DEFAULT 0,
  enqueued       BIGINT NOT NULL DEFAULT 0,
  skipped        BIGINT NOT NULL DEFAULT 0,
  delivered      BIGINT NOT NULL DEFAULT 0,        -- kept once finished (the deliveries may be swept later)
  failed         BIGINT NOT NULL DEFAULT 0,
  error          TEXT,
  runner         TEXT,
  lease_until    BIGINT,
  created_at     BIGINT NOT NULL,
  finished_at    BIGINT
);
CREATE INDEX replays_by_destination ON replays (destination_id, created_at);
CREATE INDEX replays_running ON replays (status) WHERE status = 'RUNNING';

-- The replay a delivery was created by; NULL for live deliveries.
ALTER TABLE deliveries ADD COLUMN replay_id TEXT;
CREATE INDEX deliveries_by_replay ON deliveries (replay_id, status) WHERE replay_id IS NOT NULL;
-- A replay reads its window in receive order.
CREATE INDEX messages_by_received ON messages (received_at, pk);
