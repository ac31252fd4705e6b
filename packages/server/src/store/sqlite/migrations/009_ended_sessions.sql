-- Web-app sessions signed out before they expired: a session cookie is stateless, so sign-out records
-- it here (by the SHA-256 of the cookie) until it would have expired anyway.
CREATE TABLE ended_sessions (
  session_hash TEXT PRIMARY KEY,
  expires_at INTEGER NOT NULL
);
