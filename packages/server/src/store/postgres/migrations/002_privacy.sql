-- 002: privacy (PostgreSQL). Same model as the SQLite store's 002_privacy.sql: who a stored message is
-- about, deletion and suppression requests ("regulations"), their delete notifications, suppressed ids.

-- NULL for anonymous calls and for delete notifications (which must outlive the erasure they announce).
-- Adding nullable columns without a default rewrites nothing.
ALTER TABLE messages ADD COLUMN user_id TEXT;
ALTER TABLE messages ADD COLUMN previous_id TEXT;
CREATE INDEX messages_by_user ON messages (user_id, source_id, received_at) WHERE user_id IS NOT NULL;
CREATE INDEX messages_by_previous_id ON messages (previous_id, source_id, received_at) WHERE previous_id IS NOT NULL;

ALTER TABLE source_counters ADD COLUMN suppressed BIGINT NOT NULL DEFAULT 0;

CREATE TABLE regulations (
  id              TEXT PRIMARY KEY,
  type            TEXT NOT NULL,      -- DELETE_ONLY | SUPPRESS_ONLY | SUPPRESS_WITH_DELETE | UNSUPPRESS
  subject_ids     TEXT NOT NULL,      -- JSON array of user ids
  source_ids      TEXT,               -- JSON array, or NULL for every source
  status          TEXT NOT NULL,      -- INITIALIZED | RUNNING | FINISHED | PARTIAL_SUCCESS | FAILED
  created_at      BIGINT NOT NULL,
  finished_at     BIGINT,
  erasure_pending BOOLEAN NOT NULL,   -- true while stored messages of its users remain to be erased
  erased_messages BIGINT NOT NULL DEFAULT 0,
  outcome         TEXT                -- JSON per-destination counts, frozen once every delete is final
);
CREATE INDEX regulations_by_created ON regulations (created_at, id);
CREATE INDEX regulations_unfinished ON regulations (created_at) WHERE finished_at IS NULL;

CREATE TABLE regulation_deliveries (
  regulation_id   TEXT NOT NULL REFERENCES regulations(id) ON DELETE CASCADE,
  delivery_id     BIGINT NOT NULL,
  destination_id  TEXT NOT NULL,
  PRIMARY KEY (regulation_id, delivery_id)
);

-- Suppressed user ids. source_id '*' suppresses the user in every source, present and future.
CREATE TABLE suppressions (
  user_id         TEXT NOT NULL,
  source_id       TEXT NOT NULL,
  regulation_id   TEXT NOT NULL,
  created_at      BIGINT NOT NULL,
  PRIMARY KEY (user_id, source_id)
);
