import type { TaskEvent } from '../events/task-event.js';
import type { Queryable } from './queryable.js';

/** Writes an event to the outbox, in the caller's transaction (the relay publishes it after commit). */
export async function insertOutboxEvent(db: Queryable, input: { eventId: string; workspaceId: string; event: TaskEvent }): Promise<void> {
  await db.query({
    name: 'tasks-insert-outbox',
    text: `INSERT INTO outbox (id, aggregatetype, aggregateid, type, payload, workspace_id, created_at)
           VALUES ($1, 'task', $2, $3, $4::jsonb, $5, $6)`,
    values: [input.eventId, input.event.data.id, input.event.event, JSON.stringify(input.event), input.workspaceId, input.event.createdAt],
  });
}
