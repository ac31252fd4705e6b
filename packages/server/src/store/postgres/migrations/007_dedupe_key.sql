-- SQLite moved its dedupe lookups to an 8-byte hash key (its 007_dedupe_key.sql). PostgreSQL keeps
-- the dedupe_keys table: several processes insert at once, so the key must be unique for the primary
-- key to arbitrate, and a hash is not unique. This migration records that decision on the table.
COMMENT ON TABLE dedupe_keys IS 'The dedupe rule across processes: one row per (source, messageId) received within the dedupe window; its primary key arbitrates concurrent ingests.';
