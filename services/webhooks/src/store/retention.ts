import type { Pool } from '@tws/common';

/** Rows one sweep deleted, per table. */
export interface RetentionSweep {
  deliveries: number;
  events: number;
  endpoints: number;
}

/**
 * The statements that keep the delivery log bounded: finished deliveries (succeeded, failed,
 * cancelled) older than the retention are deleted with their attempts (one statement), then events no delivery
 * refers to, then endpoints deleted that long ago. Pending deliveries are never touched. Deletes in
 * small batches so it never holds long locks; every replica may run it (the statements are
 * idempotent). workers/retention.ts runs it hourly.
 */
export class RetentionStore {
  constructor(private readonly pool: Pool) {}

  async sweep(days: number, batch = 2_000): Promise<RetentionSweep> {
    const removed = { deliveries: 0, events: 0, endpoints: 0 };
    const loop = async (sql: string): Promise<number> => {
      let total = 0;
      for (;;) {
        const { rowCount } = await this.pool.query(sql, [days, batch]);
        total += rowCount ?? 0;
        if ((rowCount ?? 0) < batch) return total;
      }
    };
    removed.deliveries = await loop(
      // Their attempts in the same statement (attempts have no foreign key to deliveries: migration 013).
      `WITH doomed AS (
         SELECT id FROM deliveries
         -- created_at <= updated_at: the first condition only narrows the scan (BRIN index on created_at).
         WHERE created_at < now() - make_interval(days => $1) AND state <> 'pending' AND updated_at < now() - make_interval(days => $1)
         LIMIT $2
       ), attempts_gone AS (
         DELETE FROM attempts WHERE delivery_id IN (SELECT id FROM doomed)
       )
       DELETE FROM deliveries WHERE id IN (SELECT id FROM doomed)`,
    );
    // Originals are found through their unique index on (event_id, endpoint_id), redeliveries through
    // their partial index on event_id (migration 016).
    removed.events = await loop(
      `DELETE FROM events WHERE id IN (
         SELECT ev.id FROM events ev
         WHERE ev.received_at < now() - make_interval(days => $1)
           AND NOT EXISTS (SELECT 1 FROM deliveries d WHERE d.event_id = ev.id AND NOT d.is_redelivery)
           AND NOT EXISTS (SELECT 1 FROM deliveries d WHERE d.event_id = ev.id AND d.is_redelivery)
         LIMIT $2)`,
    );
    removed.endpoints = await loop(
      `DELETE FROM endpoints WHERE id IN (
         SELECT e.id FROM endpoints e
         WHERE e.deleted_at < now() - make_interval(days => $1)
           AND NOT EXISTS (SELECT 1 FROM deliveries d WHERE d.endpoint_id = e.id)
         LIMIT $2)`,
    );
    return removed;
  }
}
