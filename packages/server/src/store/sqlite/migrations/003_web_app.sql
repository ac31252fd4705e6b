-- 003: what the web app needs: access tokens (only a SHA-256 hash of each token is kept) and per-minute delivery rollups.

CREATE TABLE access_tokens (
  id            TEXT PRIMARY KEY,
  name          TEXT NOT NULL,
  role          TEXT NOT NULL,            -- admin | viewer
  token_hash    TEXT NOT NULL UNIQUE,     -- hex SHA-256 of the token
  created_at    INTEGER NOT NULL,
  last_used_at  INTEGER
);

-- Per-minute delivery figures for the web app's charts, rolled up from attempts by the housekeeper:
-- answers with a 2xx (succeeded) and without (failed), and a latency histogram (b0..b10, bounds in
-- store/core/rollups.ts). A minute is rolled up once it is complete; `rollup_progress` says how far.
CREATE TABLE delivery_rollups (
  destination_id TEXT NOT NULL,
  minute         INTEGER NOT NULL,
  succeeded      INTEGER NOT NULL,
  failed         INTEGER NOT NULL,
  b0 INTEGER NOT NULL, b1 INTEGER NOT NULL, b2 INTEGER NOT NULL, b3 INTEGER NOT NULL, b4 INTEGER NOT NULL,
  b5 INTEGER NOT NULL, b6 INTEGER NOT NULL, b7 INTEGER NOT NULL, b8 INTEGER NOT NULL, b9 INTEGER NOT NULL,
  b10 INTEGER NOT NULL,
  PRIMARY KEY (destination_id, minute)
);
CREATE TABLE rollup_progress (
  name     TEXT PRIMARY KEY,
  through  INTEGER NOT NULL
);
-- The roll-up (all destinations) and the not-yet-rolled-up tail (a few minutes) read attempts by time.
CREATE INDEX attempts_by_time ON attempts (attempted_at);
