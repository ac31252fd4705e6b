-- 011: what each destination's subscription and filters kept from it, counted when routing decides.
-- Sharded like source_counters, so concurrent ingests do not queue on one row.
CREATE TABLE destination_counters (
  destination_id TEXT NOT NULL REFERENCES destinations(id) ON DELETE CASCADE,
  shard          SMALLINT NOT NULL,
  filtered       BIGINT NOT NULL DEFAULT 0,
  sampled_out    BIGINT NOT NULL DEFAULT 0,
  PRIMARY KEY (destination_id, shard)
);
