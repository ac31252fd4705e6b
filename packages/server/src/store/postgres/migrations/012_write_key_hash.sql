-- Write keys are kept encrypted in write_key (with the secret key, as destinations' settings) and looked
-- up by their SHA-256, hex: write keys are 256 random bits, so the hash reveals nothing. Rows stored
-- before get theirs at the next start.
ALTER TABLE sources ADD COLUMN write_key_hash TEXT;
CREATE UNIQUE INDEX sources_by_write_key_hash ON sources (write_key_hash);
