-- 009: what each destination's subscription and filters kept from it, counted when routing decides.
CREATE TABLE destination_counters (
  destination_id TEXT NOT NULL REFERENCES destinations(id) ON DELETE CASCADE,
  shard          INTEGER NOT NULL,
  filtered       INTEGER NOT NULL DEFAULT 0,
  sampled_out    INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (destination_id, shard)
);
