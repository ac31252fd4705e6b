-- Why a computed trait or an audience stopped evaluating (status `failed`): the evaluation's error.
-- NULL for every other status (`computing`, `live`, `disabled`).
ALTER TABLE computations ADD COLUMN error TEXT;
