-- The sweep adds a settled minute's shard rows (shard <> 0) into shard 0 every run. Only the last hour
-- or so has such rows, so this partial index stays small and the sweep never scans the whole table.
CREATE INDEX source_rollups_unfolded ON source_rollups (minute) WHERE shard <> 0;
