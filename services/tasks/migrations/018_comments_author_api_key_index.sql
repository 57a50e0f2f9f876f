-- migrate: no-transaction
-- Removing a member deletes their API keys (api_keys → members ON DELETE CASCADE), and each deleted
-- key sets author_api_key_id to NULL on its comments (comments → api_keys ON DELETE SET NULL). That
-- foreign-key action looks the comments up by author_api_key_id, which no index covered: a
-- sequential scan of every workspace's comments per deleted key, inside the removal's transaction
-- (11 ms at 20,000 comments, growing with the table; issue 21 item 4, bench/SCALE.md). Partial: most
-- comments are written by people, and `author_api_key_id = $1` implies IS NOT NULL, so the lookup
-- can use it. Built CONCURRENTLY (no lock that blocks the API's writes; see packages/common
-- migrations.ts), IF NOT EXISTS so an interrupted run can be repeated.
CREATE INDEX CONCURRENTLY IF NOT EXISTS comments_author_api_key_idx ON comments (author_api_key_id) WHERE author_api_key_id IS NOT NULL;
