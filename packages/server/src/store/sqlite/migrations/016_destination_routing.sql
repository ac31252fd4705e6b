-- A destination's routing rules (its subscription and filters) in clear, apart from its settings,
-- which are sealed with the secret key: routing judges every call in the ingest transaction and must
-- not open sealed settings to do it. Neither is a secret. NULL (rows from before): no rules.
ALTER TABLE destinations ADD COLUMN routing TEXT;
