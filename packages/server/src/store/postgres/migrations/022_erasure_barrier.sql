-- A call received before a deletion request but committed after it stayed stored: the request's
-- erasure scan ran before the call's commit and could not see it. Two halves close that gap:
--
-- 1. Every ingest statement calls sluice_erasures_since() before it writes: the function takes a
--    SHARED advisory lock, held until the ingest commits, and only then reads the deletion requests
--    created since the batch's oldest call, in a fresh snapshot (a VOLATILE function takes one per
--    query, after the lock, whatever the statement's own snapshot). Calls those requests cover are
--    accepted but not stored.
-- 2. Before each erasure batch, the eraser takes the same lock EXCLUSIVELY and lets it go (a barrier):
--    it waits for every ingest holding it.
--
-- So an ingest either held the lock before the barrier, and committed before the scan that follows
-- it, or took it after, when the request had committed, and sees the request. plpgsql, never inlined.
CREATE FUNCTION sluice_erasures_since(since BIGINT)
RETURNS TABLE (subject_ids TEXT, source_ids TEXT, created_at BIGINT)
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
  PERFORM pg_advisory_xact_lock_shared(hashtext('sluice.erasure-barrier:' || current_schema()));
  RETURN QUERY
    SELECT r.subject_ids, r.source_ids, r.created_at FROM regulations r
    WHERE r.created_at >= since AND r.type IN ('DELETE_ONLY', 'SUPPRESS_WITH_DELETE');
END
$$;
