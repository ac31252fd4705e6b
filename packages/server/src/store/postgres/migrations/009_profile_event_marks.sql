-- Evaluation keeps per-profile aggregates ("folds") in memory and then reads only the calls it has not
-- folded yet. pks cannot tell which those are (a lower pk can be consumed after a higher one), so each
-- call records the profile cursor's version of the transaction that consumed it: consumption is
-- serialized by that version, so versions grow in commit order. Calls consumed before this migration
-- have 0 (a fold is always first built from the whole history).
ALTER TABLE profile_events ADD COLUMN consumed_version BIGINT NOT NULL DEFAULT 0;
CREATE INDEX profile_events_by_version ON profile_events (profile_id, consumed_version);
-- Merges into each profile so far. Merged calls keep their older versions, so a fold built before a
-- merge (by any process) is stale once this moved.
ALTER TABLE profiles ADD COLUMN merged_in BIGINT NOT NULL DEFAULT 0;
