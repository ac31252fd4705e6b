-- 002: privacy. Who a stored message is about (so a user's data can be found and erased), deletion and
-- suppression requests ("regulations"), the delete notifications they sent, and suppressed user ids.

-- The user a message names: its userId, and for an alias its previousId too. NULL for anonymous calls and
-- for delete notifications (which must outlive the erasure they announce).
ALTER TABLE messages ADD COLUMN user_id TEXT;
ALTER TABLE messages ADD COLUMN previous_id TEXT;
-- With source_id and received_at, so "which sources has this user sent to" and "which of its calls came
-- before the request" are answered from the index alone.
CREATE INDEX messages_by_user ON messages (user_id, source_id, received_at) WHERE user_id IS NOT NULL;
CREATE INDEX messages_by_previous_id ON messages (previous_id, source_id, received_at) WHERE previous_id IS NOT NULL;

ALTER TABLE sources ADD COLUMN suppressed_count INTEGER NOT NULL DEFAULT 0;

CREATE TABLE regulations (
  id              TEXT PRIMARY KEY,
  type            TEXT NOT NULL,      -- DELETE_ONLY | SUPPRESS_ONLY | SUPPRESS_WITH_DELETE | UNSUPPRESS
  subject_ids     TEXT NOT NULL,      -- JSON array of user ids
  source_ids      TEXT,               -- JSON array, or NULL for every source
  status          TEXT NOT NULL,      -- INITIALIZED | RUNNING | FINISHED | PARTIAL_SUCCESS | FAILED
  created_at      INTEGER NOT NULL,
  finished_at     INTEGER,
  erasure_pending INTEGER NOT NULL,   -- 1 while stored messages of its users remain to be erased
  erased_messages INTEGER NOT NULL DEFAULT 0,
  outcome         TEXT                -- JSON per-destination counts, frozen once every delete is final
);
CREATE INDEX regulations_by_created ON regulations (created_at, id);
CREATE INDEX regulations_unfinished ON regulations (created_at) WHERE finished_at IS NULL;

-- The delete notifications of a regulation: ordinary deliveries, listed here to count them.
CREATE TABLE regulation_deliveries (
  regulation_id   TEXT NOT NULL REFERENCES regulations(id) ON DELETE CASCADE,
  delivery_id     INTEGER NOT NULL,
  destination_id  TEXT NOT NULL,
  PRIMARY KEY (regulation_id, delivery_id)
);

-- Suppressed user ids. source_id '*' suppresses the user in every source, present and future.
CREATE TABLE suppressions (
  user_id         TEXT NOT NULL,
  source_id       TEXT NOT NULL,
  regulation_id   TEXT NOT NULL,
  created_at      INTEGER NOT NULL,
  PRIMARY KEY (user_id, source_id)
);
