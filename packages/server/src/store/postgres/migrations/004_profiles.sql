-- 004 (PostgreSQL): profiles built from accepted messages, their identities and their own copy of the calls.
-- The profile worker consumes messages after they are committed, in pk order, and records how far it
-- got in profile_cursor in the same transaction as the profile changes (see docs/profiles.md).

CREATE TABLE profile_cursor (
  id          SMALLINT PRIMARY KEY CHECK (id = 1),
  high_pk     BIGINT NOT NULL,        -- every message up to here is consumed, except those in gaps
  gaps        TEXT NOT NULL,           -- JSON [[fromPk, toPk, seenAt], ...]: pks not committed yet when seen
  version     BIGINT NOT NULL         -- bumped by every write: a batch commits only on the version it read
);
INSERT INTO profile_cursor (id, high_pk, gaps, version) VALUES (1, 0, '[]', 0);

CREATE TABLE profiles (
  id            TEXT PRIMARY KEY,
  traits        TEXT NOT NULL,         -- JSON object: merged identify traits
  trait_times   TEXT NOT NULL,         -- JSON object: trait -> timestamp (ms) of the call that set it
  first_seen_at BIGINT NOT NULL,
  last_seen_at  BIGINT NOT NULL
);

-- kind: 'user' (userId) or 'anonymous' (anonymousId). One identity belongs to one profile.
CREATE TABLE profile_identities (
  kind        TEXT NOT NULL,
  value       TEXT NOT NULL,
  profile_id  TEXT NOT NULL,
  linked_at   BIGINT NOT NULL,        -- timestamp of the call that linked it: the newest userId speaks for the profile
  PRIMARY KEY (kind, value)
);
CREATE INDEX profile_identities_by_profile ON profile_identities (profile_id);

-- A profile merged into another (alias, or a call linking two profiles): its id keeps answering.
CREATE TABLE profile_merges (
  from_id     TEXT PRIMARY KEY,
  into_id     TEXT NOT NULL
);
CREATE INDEX profile_merges_by_into ON profile_merges (into_id);

-- The calls of each profile, kept apart from messages (which retention sweeps).
CREATE TABLE profile_events (
  message_pk  BIGINT PRIMARY KEY,
  profile_id  TEXT NOT NULL,
  source_id   TEXT NOT NULL,
  message_id  TEXT NOT NULL,
  type        TEXT NOT NULL,
  event       TEXT,                    -- track: the event name
  occurred_at BIGINT NOT NULL,        -- the call's timestamp, ms
  properties  TEXT NOT NULL            -- JSON: track properties, identify/group traits, page/screen properties
);
CREATE INDEX profile_events_by_profile ON profile_events (profile_id, message_pk);

-- Profiles whose computed traits and audiences must be evaluated again (new calls, merges, a new
-- definition's backfill, a time window's edge). seq grows with every new mark, so an evaluation that
-- read an older mark leaves the newer one in place.
CREATE TABLE profile_dirty (
  profile_id  TEXT PRIMARY KEY,
  seq         BIGINT NOT NULL
);

-- Computed traits and audiences ("computations"): keys are unique across both.
CREATE TABLE computations (
  id              TEXT PRIMARY KEY,
  class           TEXT NOT NULL,          -- computed_trait | audience
  name            TEXT NOT NULL,
  key             TEXT NOT NULL UNIQUE,   -- snake_cased name at creation; never changes
  definition      TEXT NOT NULL,          -- JSON, per class (see docs/profiles.md)
  destination_ids TEXT NOT NULL,          -- JSON array
  status          TEXT NOT NULL,          -- computing | live
  last_sync_at    BIGINT,                 -- when an identify for it was last enqueued
  created_at      BIGINT NOT NULL,
  updated_at      BIGINT NOT NULL
);

-- Current values (JSON) per computation and profile; a profile with no value has no row.
CREATE TABLE computed_values (
  computation_id TEXT NOT NULL,
  profile_id     TEXT NOT NULL,
  value          TEXT NOT NULL,
  PRIMARY KEY (computation_id, profile_id)
);
CREATE INDEX computed_values_by_profile ON computed_values (profile_id);

-- The last value sent per computation, destination and profile, written in the same transaction as the
-- delivery that sends it: never the same value twice in a row, even across a crash.
CREATE TABLE computed_sent (
  computation_id TEXT NOT NULL,
  destination_id TEXT NOT NULL,
  profile_id     TEXT NOT NULL,
  value          TEXT NOT NULL,
  PRIMARY KEY (computation_id, destination_id, profile_id)
);
CREATE INDEX computed_sent_by_profile ON computed_sent (profile_id);
CREATE INDEX profile_events_by_event ON profile_events (event, occurred_at);

-- Sync messages (identify calls carrying computed values) are stored under this source, like any
-- message, so they are delivered, retried, listed and replayed like any other. It is disabled (it
-- accepts no calls), hidden from source lists, and the profile worker skips its messages.
INSERT INTO sources (id, name, write_key, enabled, created_at)
VALUES ('src_sluice_computed', 'Sluice computed traits', md5(random()::text) || md5(random()::text), false, 0);
