-- How many profiles a deletion request erased. NULL until its profiles are erased, which happens once
-- its messages are gone, so the profile worker cannot rebuild a profile from them afterwards.
ALTER TABLE regulations ADD COLUMN erased_profiles INTEGER;
