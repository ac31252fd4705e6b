-- 014: endpoint health and operational alerts.
-- endpoint_states: what the delivery engine must share about one URL of a destination, written only when
-- it changes (a URL starts or stops failing, is disabled or enabled), never per successful attempt. The
-- figures (consecutive failures, last success, success rate) are read from the attempts themselves.
CREATE TABLE endpoint_states (
  destination_id  TEXT NOT NULL REFERENCES destinations(id) ON DELETE CASCADE,
  url             TEXT NOT NULL,
  failing_since   INTEGER,           -- first failure after its last success; NULL while it succeeds
  disabled_at     INTEGER,           -- NULL while enabled
  disabled_reason TEXT,
  updated_at      INTEGER NOT NULL,
  PRIMARY KEY (destination_id, url)
);

-- operational_events: what Sluice tells the operator (failing, disabled and recovered URLs,
-- dead-lettered deliveries, finished regulations). Kept as notices, and each one is the outbox row of
-- its alert: delivered to the alert URL with retries.
CREATE TABLE operational_events (
  id              INTEGER PRIMARY KEY AUTOINCREMENT,
  event_id        TEXT NOT NULL UNIQUE,
  type            TEXT NOT NULL,
  subject         TEXT NOT NULL,     -- what rate limits apply to: a URL, a destination, a regulation
  body            TEXT NOT NULL,     -- the JSON sent
  created_at      INTEGER NOT NULL,
  alert_status    TEXT NOT NULL,     -- none (no alert URL) | pending | delivered | failed
  attempt_count   INTEGER NOT NULL DEFAULT 0,
  next_attempt_at INTEGER NOT NULL,
  lease_until     INTEGER,
  last_error      TEXT
);
CREATE INDEX operational_events_by_subject ON operational_events (type, subject, created_at);
CREATE INDEX operational_events_due ON operational_events (next_attempt_at) WHERE alert_status = 'pending';

-- alert_settings: the operator's alert URL (one row, id = 1).
CREATE TABLE alert_settings (
  id            INTEGER PRIMARY KEY CHECK (id = 1),
  url           TEXT NOT NULL,
  shared_secret TEXT NOT NULL,       -- whsec_… (Standard Webhooks)
  events        TEXT,                -- JSON array of event types; NULL: every type
  updated_at    INTEGER NOT NULL
);
