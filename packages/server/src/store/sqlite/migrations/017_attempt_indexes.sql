-- Every delivery adds an attempt row in its outcome commit, and each of the row's b-trees is pages of
-- WAL in that commit. Two fewer: the rowid is no longer AUTOINCREMENT (no sqlite_sequence row to
-- rewrite each commit; a new id is still larger than every stored one, so attempts keep their order,
-- and nothing outside the store sees an attempt's id), and one index by destination and time replaces
-- the index by destination and id and the one by time. It serves a destination's most recent attempts
-- (health figures, latency), its minutes not rolled up yet, and the roll-up of all destinations, read
-- destination by destination. The table is rebuilt to drop AUTOINCREMENT; its rows are kept.
CREATE TABLE attempts_rebuilt (
  id              INTEGER PRIMARY KEY,
  delivery_id     INTEGER NOT NULL REFERENCES deliveries(id) ON DELETE CASCADE,
  destination_id  TEXT NOT NULL,      -- copied from the delivery: figures per destination
  attempted_at    INTEGER NOT NULL,
  url             TEXT NOT NULL,
  status_code     INTEGER,
  error_kind      TEXT,               -- timeout | connect | tls | ssrf | redirect | http | ...
  error_text      TEXT,
  latency_ms      INTEGER NOT NULL,
  response_excerpt TEXT               -- at most 1 KB
);
INSERT INTO attempts_rebuilt (id, delivery_id, destination_id, attempted_at, url, status_code, error_kind,
  error_text, latency_ms, response_excerpt)
SELECT id, delivery_id, destination_id, attempted_at, url, status_code, error_kind, error_text, latency_ms,
  response_excerpt FROM attempts;
DROP TABLE attempts;
ALTER TABLE attempts_rebuilt RENAME TO attempts;
CREATE INDEX attempts_by_delivery ON attempts (delivery_id);
CREATE INDEX attempts_by_destination_time ON attempts (destination_id, attempted_at);
