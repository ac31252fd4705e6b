-- The due index holds only deliveries in no batch: what classic claims and batch formation read.
-- A delivery that joins a batch leaves it once and its outcome no longer touches it (the batch has
-- its own due index), where before joining moved its entry and the outcome removed it.
DROP INDEX deliveries_due;
CREATE INDEX deliveries_due ON deliveries (destination_id, next_attempt_at)
  WHERE status IN ('pending', 'retrying') AND batch_id IS NULL;
