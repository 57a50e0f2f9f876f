-- Each attempt moves its delivery on with an UPDATE (state, next_attempt, updated_at, ...) a few
-- milliseconds after the INSERT that created it. An index on any of those columns makes every such
-- update write a new entry into every index of the table; without one, Postgres makes it a HOT
-- update (the new row version on the same page, no index writes). So:
-- - the retention job finds old finished deliveries through created_at (never updated; a delivery's
--   updated_at is never earlier than its created_at) with a BRIN index, cheap to keep up for rows
--   inserted in time order, instead of a partial B-tree on (updated_at) WHERE state <> 'pending';
-- - pages keep room for the updated versions.
DROP INDEX deliveries_finished_idx;
CREATE INDEX deliveries_created_brin ON deliveries USING brin (created_at);
ALTER TABLE deliveries SET (fillfactor = 80);
