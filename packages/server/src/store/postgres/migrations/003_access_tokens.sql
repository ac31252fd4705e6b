-- 003: access tokens for the management API and the web app. Only a SHA-256 hash of each token is kept.

CREATE TABLE access_tokens (
  id            TEXT PRIMARY KEY,
  name          TEXT NOT NULL,
  role          TEXT NOT NULL,            -- admin | viewer
  token_hash    TEXT NOT NULL UNIQUE,     -- hex SHA-256 of the token
  created_at    BIGINT NOT NULL,
  last_used_at  BIGINT
);
