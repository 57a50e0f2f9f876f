-- Webhook administration (issue #18 item 6).
-- Secret rotation: the rotated-out secret keeps signing `webhook-signature` (beside the new one) until
-- previous_secret_expires_at; a periodic job then deletes it (sealed like secret_ciphertext, with the
-- endpoint id as associated data).
ALTER TABLE endpoints ADD COLUMN previous_secret_ciphertext bytea;
ALTER TABLE endpoints ADD COLUMN previous_secret_expires_at timestamptz;
ALTER TABLE endpoints ADD CONSTRAINT endpoints_previous_secret_pair
  CHECK ((previous_secret_ciphertext IS NULL) = (previous_secret_expires_at IS NULL));
CREATE INDEX endpoints_previous_secret_idx ON endpoints (previous_secret_expires_at) WHERE previous_secret_expires_at IS NOT NULL;

-- Disabled endpoints get no new deliveries. disabled_reason: 'manual' (PATCH enabled=false) or
-- 'failing' (every attempt failed since failing_since for WEBHOOK_AUTO_DISABLE_AFTER_SECONDS).
-- failing_since is written only on a change (first failure after a success, first success after
-- failures), never once per attempt.
ALTER TABLE endpoints ADD COLUMN disabled_at timestamptz;
ALTER TABLE endpoints ADD COLUMN disabled_reason text CHECK (disabled_reason IN ('manual', 'failing'));
ALTER TABLE endpoints ADD CONSTRAINT endpoints_disabled_pair CHECK ((disabled_at IS NULL) = (disabled_reason IS NULL));
ALTER TABLE endpoints ADD COLUMN failing_since timestamptz;

-- The test ping (`ping` events) is delivered through the same tables; its task_id is the endpoint id.
