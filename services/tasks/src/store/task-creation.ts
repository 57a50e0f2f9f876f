import type { TaskEvent } from '@tws/contracts';
import { auditInsertSql, auditRecordJson, type AuditRecord, type Queryable } from '@tws/common';

/** One task of a creation batch (all items of a batch go to the same section). */
export interface NewTask {
  id: string;
  name: string;
  assigneeId: string | null;
  createdAt: Date;
  eventId: string;
  /** Its `task.created` payload; `create_tasks` fills in `data.number` and `data.statusId`. */
  event: TaskEvent;
  /** The request that created it (a Kafka header of the event). */
  requestId: string | null;
  /** The trace context of the call that created it (migration 016), when traced. */
  traceparent: string | null;
  /** Its `task.created` audit row (migration 017), written by the same statement when it is created. */
  audit: AuditRecord;
}

export interface SectionKey {
  workspaceId: string;
  projectId: string;
  sectionId: string;
}

export type CreateOutcome =
  | { outcome: 'created'; number: number }
  | { outcome: 'project_not_found' | 'section_not_in_project' | 'assignee_not_member' | 'plan_limit' };

/**
 * Creates tasks at the end of one section, with their `task.created` events, in one statement
 * (`create_tasks`, migrations 004, 010 and 016); one outcome per item, in order. Call it on the pool, outside an
 * explicit transaction: its row locks are then never held across a round trip.
 */
export async function createTasks(db: Queryable, section: SectionKey, items: NewTask[], freeTaskLimit: number): Promise<CreateOutcome[]> {
  const { rows } = await db.query<{ item_outcome: CreateOutcome['outcome']; item_number: number | null }>({
    name: 'tasks-create-tasks',
    // The audit rows of the created items go in with the same statement (one per `created` outcome, by ordinal).
    text: `WITH created AS (
             SELECT * FROM create_tasks($1, $2, $3, $4, $5, $6, $7, $8, $9, $10::jsonb[], $11::text[], $12::text[])
               WITH ORDINALITY AS c(item_outcome, item_number, ord)
           ),
           audit AS (${auditInsertSql('r.value', 'created JOIN unnest($13::jsonb[]) WITH ORDINALITY AS r(value, ord) USING (ord)', "created.item_outcome = 'created'")})
           SELECT item_outcome, item_number FROM created ORDER BY ord`,
    values: [
      section.workspaceId,
      section.projectId,
      section.sectionId,
      freeTaskLimit,
      items.map((item) => item.id),
      items.map((item) => item.name),
      items.map((item) => item.assigneeId),
      items.map((item) => item.createdAt),
      items.map((item) => item.eventId),
      items.map((item) => JSON.stringify(item.event)),
      items.map((item) => item.requestId),
      items.map((item) => item.traceparent),
      items.map((item) => auditRecordJson(item.audit)),
    ],
  });
  return rows.map((row) =>
    row.item_outcome === 'created' ? { outcome: 'created', number: row.item_number! } : { outcome: row.item_outcome },
  );
}
