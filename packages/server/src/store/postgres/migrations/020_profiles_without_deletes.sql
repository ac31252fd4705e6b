-- 020: profiles took the `delete` notifications of a deletion request in as calls of the user they
-- name. Read before the erasure, a delete added a call to the profile the erasure then removed; read
-- after it (the profile worker behind), it made the erased user a new profile holding nothing but
-- that delete. Profiles no longer take them in. This removes what they left: the profiles made of
-- deletes alone, with their identities and computed state (as an erasure does), then every `delete`
-- among profiles' calls.
-- Every part of one statement sees the rows as they were before it: `doomed` is read first.
WITH doomed AS MATERIALIZED (
       SELECT profile_id AS id FROM profile_events WHERE type = 'delete'
       EXCEPT SELECT profile_id FROM profile_events WHERE type <> 'delete'),
     identities AS (DELETE FROM profile_identities WHERE profile_id IN (SELECT id FROM doomed)),
     merges AS (DELETE FROM profile_merges WHERE into_id IN (SELECT id FROM doomed)),
     values_gone AS (DELETE FROM computed_values WHERE profile_id IN (SELECT id FROM doomed)),
     sent_gone AS (DELETE FROM computed_sent WHERE profile_id IN (SELECT id FROM doomed)),
     queue_gone AS (DELETE FROM profile_dirty WHERE profile_id IN (SELECT id FROM doomed)),
     deletes_gone AS (DELETE FROM profile_events WHERE type = 'delete')
DELETE FROM profiles WHERE id IN (SELECT id FROM doomed);
