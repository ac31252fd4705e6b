-- Dedupe on an 8-byte key instead of an index over the text columns (source_id, message_id,
-- received_at): dedupe_key is a hash of (source_id, message_id) (store/core/dedupe-key.ts), so an index
-- entry is ~12 bytes instead of ~70 and each commit dirties far fewer index pages. Lookups compare the
-- text on a key hit.
--
-- Ingest writes the key with each row. Rows without one are found by their text in a partial index:
-- the messages stored before this migration (no row is rewritten, so upgrading a large file takes one
-- index build, not a copy of the table; they leave with retention) and Sluice's own messages
-- (computed-trait syncs, deletion notices). A trigger filling the key in cost ~15% of ingest's store CPU.
ALTER TABLE messages ADD COLUMN dedupe_key INTEGER;
CREATE INDEX messages_by_dedupe_key ON messages (dedupe_key) WHERE dedupe_key IS NOT NULL;
CREATE INDEX messages_unkeyed ON messages (source_id, message_id) WHERE dedupe_key IS NULL;
DROP INDEX messages_by_source_message;
