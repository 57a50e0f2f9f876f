-- Whether a delivery is a redelivery must not depend on its original still existing. Retention
-- deletes an original before its (newer) redeliveries; ON DELETE SET NULL then turned two
-- redeliveries of one event and endpoint into two "originals", which the unique index below
-- refused, and every later retention batch failed on them.
ALTER TABLE deliveries ADD COLUMN is_redelivery boolean NOT NULL DEFAULT false;
UPDATE deliveries SET is_redelivery = true WHERE redelivery_of IS NOT NULL;
DROP INDEX deliveries_event_endpoint_key;
CREATE UNIQUE INDEX deliveries_event_endpoint_key ON deliveries (event_id, endpoint_id) WHERE NOT is_redelivery;
