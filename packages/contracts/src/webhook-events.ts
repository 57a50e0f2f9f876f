import { z } from 'zod';
import { taskEventKinds, taskEventSchema } from './task-events.js';

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
