-- The request rate limit shared by the gateway replicas (tasks.v1.RateLimitService, README "Rate
-- limits"): one token bucket per key (the SHA-256 of the gateway's bucket key), refilled lazily when a
-- replica's sync touches it. UNLOGGED: no WAL for counters rewritten several times a second; after a
-- crash (or on a promoted standby) the table is empty, which means every bucket starts full again.
CREATE UNLOGGED TABLE rate_limit_buckets (
  key_hash text PRIMARY KEY CHECK (key_hash ~ '^[0-9a-f]{64}$'),
  tokens double precision NOT NULL,
  -- Requests reported for the key by every replica since the row was created.
  total bigint NOT NULL CHECK (total >= 0),
  updated_at timestamptz NOT NULL
);
-- Buckets untouched for longer than a full refill are full again: deleted oldest first.
CREATE INDEX rate_limit_buckets_by_age ON rate_limit_buckets (updated_at);

-- The gateway replicas that synced recently: their count divides the limit while a replica cannot sync.
CREATE UNLOGGED TABLE rate_limit_replicas (
  replica_id text PRIMARY KEY CHECK (length(replica_id) BETWEEN 1 AND 64),
  seen_at timestamptz NOT NULL
);
