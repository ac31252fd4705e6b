import type { MessageRow } from '../../tables/messages.ts'
import type {
  IdentityRow,
  ProfileCursorRow,
  ProfileEventRow,
  ProfileRow,
  ProfilesSql,
} from '../../tables/profiles.ts'
import { pgText } from '../connection.ts'
import type { PostgresDatabase } from '../database.ts'
import { queueProfiles } from './computations.ts'

/**
 * profiles and their tables on PostgreSQL. A batch's writes go as arrays (`unnest`), a few statements
 * per batch whatever its size. Several processes may plan the same batch; the cursor's version, updated
 * first, lets exactly one apply it (the others wait on its row lock, then find the version moved).
 */
export function postgresProfiles(db: PostgresDatabase): ProfilesSql {
  const texts = (values: string[]) => values.map((value) => pgText(value))
  return {
    cursor: async () =>
      (await db.query<ProfileCursorRow>('SELECT high_pk, gaps, version FROM profile_cursor'))[0]!,
    messages: (afterPk, upToPk, limit) =>
      db.query<MessageRow>(
        'SELECT * FROM messages WHERE pk > $1 AND ($2::bigint IS NULL OR pk <= $2) ORDER BY pk LIMIT $3',
        [afterPk, upToPk, limit],
      ),
    identities: (kind, values) =>
      db.query<IdentityRow>('SELECT * FROM profile_identities WHERE kind = $1 AND value = ANY($2::text[])', [
        kind,
        texts(values),
      ]),
    identitiesOf: (profileIds) =>
      db.query<IdentityRow>('SELECT * FROM profile_identities WHERE profile_id = ANY($1::text[])', [
        profileIds,
      ]),
    profiles: (ids) =>
      db.query<ProfileRow>('SELECT * FROM profiles WHERE id = ANY($1::text[])', [texts(ids)]),
    page: (afterId, limit) =>
      db.query<ProfileRow>('SELECT * FROM profiles WHERE $1::text IS NULL OR id > $1 ORDER BY id LIMIT $2', [
        afterId === null ? null : pgText(afterId),
        limit,
      ]),
    search: async (text, limit) =>
      (
        await db.query<{ profile_id: string }>(
          `SELECT DISTINCT profile_id FROM profile_identities WHERE strpos(value, $1) > 0
           ORDER BY profile_id LIMIT $2`,
          [pgText(text), limit],
        )
      ).map((row) => row.profile_id),
    resolve: async (id) =>
      (
        await db.query<{ id: string }>(
          `SELECT id FROM profiles WHERE id = $1
           UNION ALL SELECT into_id FROM profile_merges WHERE from_id = $1 LIMIT 1`,
          [pgText(id)],
        )
      )[0]?.id,
    apply: (writes) =>
      db.transaction(async (client) => {
        const { cursor } = writes
        const moved = await client.query(
          'UPDATE profile_cursor SET high_pk = $1, gaps = $2, version = version + 1 WHERE version = $3',
          [cursor.highPk, cursor.gaps, cursor.readVersion],
        )
        if ((moved.rowCount ?? 0) === 0) return false
        for (const { from_id, into_id } of writes.merges) {
          await client.query(
            `WITH identities AS (UPDATE profile_identities SET profile_id = $2 WHERE profile_id = $1),
                 events AS (UPDATE profile_events SET profile_id = $2 WHERE profile_id = $1),
                 earlier AS (UPDATE profile_merges SET into_id = $2 WHERE into_id = $1),
                 bumped AS (UPDATE profiles SET merged_in = merged_in + 1 WHERE id = $2),
                 gone AS (DELETE FROM profiles WHERE id = $1),
                 values_gone AS (DELETE FROM computed_values WHERE profile_id = $1),
                 sent_gone AS (DELETE FROM computed_sent WHERE profile_id = $1),
                 queue_gone AS (DELETE FROM profile_dirty WHERE profile_id = $1)
               INSERT INTO profile_merges (from_id, into_id) VALUES ($1, $2)
               ON CONFLICT (from_id) DO UPDATE SET into_id = EXCLUDED.into_id`,
            [from_id, into_id],
          )
        }
        const { profiles, identities, events } = writes
        await client.query(
          `INSERT INTO profiles (id, traits, trait_times, first_seen_at, last_seen_at)
             SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::bigint[], $5::bigint[])
             ON CONFLICT (id) DO UPDATE SET traits = EXCLUDED.traits, trait_times = EXCLUDED.trait_times,
               first_seen_at = EXCLUDED.first_seen_at, last_seen_at = EXCLUDED.last_seen_at`,
          [
            profiles.map((p) => p.id),
            profiles.map((p) => pgText(p.traits)),
            profiles.map((p) => p.trait_times),
            profiles.map((p) => p.first_seen_at),
            profiles.map((p) => p.last_seen_at),
          ],
        )
        await client.query(
          `INSERT INTO profile_identities (kind, value, profile_id, linked_at)
             SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::bigint[])
             ON CONFLICT (kind, value) DO UPDATE SET profile_id = EXCLUDED.profile_id`,
          [
            identities.map((i) => i.kind),
            texts(identities.map((i) => i.value)),
            identities.map((i) => i.profile_id),
            identities.map((i) => i.linked_at),
          ],
        )
        await client.query(
          `INSERT INTO profile_events (message_pk, profile_id, source_id, message_id, type, event, occurred_at, properties, consumed_version)
             SELECT *, $9::bigint FROM unnest($1::bigint[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::bigint[], $8::text[])
             ON CONFLICT (message_pk) DO NOTHING`,
          [
            events.map((e) => e.message_pk),
            events.map((e) => e.profile_id),
            events.map((e) => e.source_id),
            events.map((e) => e.message_id),
            events.map((e) => e.type),
            events.map((e) => (e.event === null ? null : pgText(e.event))),
            events.map((e) => e.occurred_at),
            events.map((e) => pgText(e.properties)),
            cursor.readVersion + 1,
          ],
        )
        await client.query(queueProfiles('SELECT unnest($1::text[])'), [writes.dirty])
        return true
      }),
    events: (profileId, limit, beforePk) =>
      db.query<ProfileEventRow>(
        `SELECT * FROM profile_events WHERE profile_id = $1 AND ($2::bigint IS NULL OR message_pk < $2)
         ORDER BY message_pk DESC LIMIT $3`,
        [pgText(profileId), beforePk, limit],
      ),
    erase: (userIds, sourceIds) =>
      db.transaction(async (client) => {
        // The cursor first, as consuming locks it first: an erasure and a batch wait for each other
        // instead of deadlocking. A batch planned before the erasure would write the profiles back: it
        // must fail its cursor check.
        await client.query('UPDATE profile_cursor SET version = version + 1')
        const { rows } = await client.query<{ n: number }>(
          `WITH doomed AS MATERIALIZED (
             SELECT DISTINCT i.profile_id AS id FROM profile_identities i
             WHERE i.kind = 'user' AND i.value = ANY($1::text[])
               AND ($2::text[] IS NULL OR EXISTS (SELECT 1 FROM profile_events e
                 WHERE e.profile_id = i.profile_id AND e.source_id = ANY($2::text[])))),
           identities AS (DELETE FROM profile_identities WHERE profile_id IN (SELECT id FROM doomed)),
           events AS (DELETE FROM profile_events WHERE profile_id IN (SELECT id FROM doomed)),
           merges AS (DELETE FROM profile_merges WHERE into_id IN (SELECT id FROM doomed)),
           gone AS (DELETE FROM profiles WHERE id IN (SELECT id FROM doomed) RETURNING 1),
           values_gone AS (DELETE FROM computed_values WHERE profile_id IN (SELECT id FROM doomed)),
           sent_gone AS (DELETE FROM computed_sent WHERE profile_id IN (SELECT id FROM doomed)),
           queue_gone AS (DELETE FROM profile_dirty WHERE profile_id IN (SELECT id FROM doomed))
           SELECT count(*)::int AS n FROM doomed`,
          [texts(userIds), sourceIds],
        )
        return rows[0]?.n ?? 0
      }),
  }
}
