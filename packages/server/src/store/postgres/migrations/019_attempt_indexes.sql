-- Every delivery adds an attempt row in its outcome commit, and each of the row's indexes is WAL in that
-- commit. One index by destination and time replaces the index by destination and id and the one by
-- time: it serves a destination's most recent attempts (health figures, latency), its minutes not rolled
-- up yet, and the roll-up of all destinations, read destination by destination.
DROP INDEX attempts_by_destination;
DROP INDEX attempts_by_time;
CREATE INDEX attempts_by_destination_time ON attempts (destination_id, attempted_at);
