import { z } from 'zod';
import { taskEventKinds, taskEventSchema, type TaskEvent } from './task-events.js';

/**
 * What a webhook endpoint receives (the body of a delivery): a task event of `task-events.v1`,
 * forwarded byte for byte (`taskEventSchema`), or the `ping` of `POST /v1/webhooks/:id/test`, which
 * has the same envelope (`id` evt_<uuid>, `event`, `createdAt`) and names the endpoint in `data`.
 */
export const webhookEventKinds = [...taskEventKinds, 'ping'] as const;
export type WebhookEventKind = (typeof webhookEventKinds)[number];

/** The writer's schema of a `ping` delivery (strict, contract field order). */
export const pingEventSchema = z.strictObject({
  id: taskEventSchema.shape.id,
  event: z.literal('ping'),
  createdAt: taskEventSchema.shape.createdAt,
  data: z.strictObject({ webhookId: z.string().min(1) }),
});
export type PingEvent = z.infer<typeof pingEventSchema>;

/** The task event of one kind (`event` fixed): what an endpoint subscribed to `kind` receives. */
export const taskEventSchemaOf = <Kind extends (typeof taskEventKinds)[number]>(kind: Kind) =>
  taskEventSchema.extend({ event: z.literal(kind) });

/**
 * One task event as the documentation shows it (the OpenAPI `webhooks` examples) and the tests start
 * from: valid for `taskEventSchema` (contracts.test.ts checks it).
 */
export const exampleTaskEvent: TaskEvent = {
  id: 'evt_7d1c1c2e-36c1-4b7e-9f55-0a7f8d0f3c11',
  event: 'task.updated',
  createdAt: '2026-11-22T10:00:01.000Z',
  data: {
    id: 'a1d2c3b4-0000-4000-8000-000000000009',
    number: 7,
    name: 'Ship it',
    isCompleted: false,
    listId: 'a1d2c3b4-0000-4000-8000-000000000001',
    projectId: 'a1d2c3b4-0000-4000-8000-000000000002',
    assigneeId: null,
    statusId: 'a1d2c3b4-0000-4000-8000-000000000003',
    labels: [{ id: 'a1d2c3b4-0000-4000-8000-000000000004', name: 'bug', color: '#DC2626' }],
    createdAt: '2026-11-22T10:00:00.123Z',
  },
};
