-- Calls each source stored per minute (by the minute they were received), kept by the ingest statement
-- itself, in the transaction that stores them: the source's chart reads these rows, never the messages.
-- They go with their source (cascade). Like source_counters, each API process adds to a random shard,
-- so concurrent ingests of one source do not queue on one row lock; readers sum the shards.
CREATE TABLE source_rollups (
  source_id TEXT NOT NULL REFERENCES sources(id) ON DELETE CASCADE,
  minute    BIGINT NOT NULL,
  shard     SMALLINT NOT NULL,
  accepted  BIGINT NOT NULL,
  PRIMARY KEY (source_id, minute, shard)
);
-- Calls stored before this table existed, from the messages still kept.
INSERT INTO source_rollups (source_id, minute, shard, accepted)
  SELECT source_id, received_at / 60000 * 60000, 0, count(*) FROM messages
  WHERE source_id IN (SELECT id FROM sources)
  GROUP BY source_id, received_at / 60000 * 60000;
