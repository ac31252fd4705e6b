-- Calls each source stored per minute (by the minute they were received), kept by the ingest commit
-- itself, in the transaction that stores them: the source's chart reads these rows, never the messages.
-- They go with their source (cascade).
CREATE TABLE source_rollups (
  source_id TEXT NOT NULL REFERENCES sources(id) ON DELETE CASCADE,
  minute    INTEGER NOT NULL,
  accepted  INTEGER NOT NULL,
  PRIMARY KEY (source_id, minute)
) WITHOUT ROWID;
-- Calls stored before this table existed, from the messages still kept.
INSERT INTO source_rollups (source_id, minute, accepted)
  SELECT source_id, received_at / 60000 * 60000, count(*) FROM messages GROUP BY source_id, received_at / 60000 * 60000;
