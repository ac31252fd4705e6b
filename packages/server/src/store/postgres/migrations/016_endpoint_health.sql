-- 016: endpoint health and operational alerts (the same tables as SQLite's 014, see there).
CREATE TABLE endpoint_states (
  destination_id  TEXT NOT NULL REFERENCES destinations(id) ON DELETE CASCADE,
  url             TEXT NOT NULL,
  failing_since   BIGINT,
  disabled_at     BIGINT,
  disabled_reason TEXT,
  updated_at      BIGINT NOT NULL,
  PRIMARY KEY (destination_id, url)
);

CREATE TABLE operational_events (
  id              BIGSERIAL PRIMARY KEY,
  event_id        TEXT NOT NULL UNIQUE,
  type            TEXT NOT NULL,
  subject         TEXT NOT NULL,
  body            TEXT NOT NULL,
  created_at      BIGINT NOT NULL,
  alert_status    TEXT NOT NULL,
  attempt_count   INTEGER NOT NULL DEFAULT 0,
  next_attempt_at BIGINT NOT NULL,
  lease_until     BIGINT,
  last_error      TEXT
);
CREATE INDEX operational_events_by_subject ON operational_events (type, subject, created_at);
CREATE INDEX operational_events_due ON operational_events (next_attempt_at) WHERE alert_status = 'pending';

CREATE TABLE alert_settings (
  id            INTEGER PRIMARY KEY CHECK (id = 1),
  url           TEXT NOT NULL,
  shared_secret TEXT NOT NULL,
  events        TEXT,
  updated_at    BIGINT NOT NULL
);
