-- A profile's queue entry carried a seq that started at 1 and grew while the entry existed. An
-- evaluation commits only if the entries it read still have the seq it read; but once another
-- process's evaluation removed an entry and a new call queued the profile again, the new entry had
-- seq 1 as well, and a stale evaluation (one that read the old entry and what was sent before the
-- other process's commit) matched it and sent the same value a second time. Every mark now draws its
-- seq from one sequence, which never gives the same number twice, starting above every seq in use.
CREATE SEQUENCE profile_dirty_seq AS BIGINT OWNED BY profile_dirty.seq;
SELECT setval('profile_dirty_seq', (SELECT COALESCE(max(seq), 0) + 1 FROM profile_dirty), false);
ALTER TABLE profile_dirty ALTER COLUMN seq SET DEFAULT nextval('profile_dirty_seq');
