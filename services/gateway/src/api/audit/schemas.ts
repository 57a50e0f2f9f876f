import { z } from 'zod';
import type { AuditEvent__Output } from '@tws/proto-types/generated/audit/v1/AuditEvent';
import { Timestamp } from '../schemas/common.js';
import { defaultAuditLimit, maxAuditLimit } from './paging.js';

export const AuditQuery = z.strictObject({
  limit: z.coerce
    .number()
    .int()
    .min(1)
    .max(maxAuditLimit)
    .default(defaultAuditLimit)
    .meta({ description: `Page size, 1–${maxAuditLimit} (default ${defaultAuditLimit}). The next page is in the \`Link: <…>; rel="next"\` header; no such header = last page.` }),
  cursor: z
    .string()
    .min(1)
    .max(120)
    .optional()
    .meta({ description: 'Opaque: the `cursor` of a `Link` rel="next" URL of this list. Malformed or edited: 400.' }),
});

const actorTypes = ['apiKey', 'user', 'system'] as const;

export const AuditEntry = z
  .object({
    id: z.string().meta({ format: 'uuid' }),
    at: Timestamp.meta({ description: 'When the change was committed (millisecond precision).' }),
    actor: z
      .object({
        type: z.enum(actorTypes).meta({ description: '`apiKey`: an API key; `user`: a person (OAuth token or the web app); `system`: the service itself or the operator CLI.' }),
        id: z.string().nullable().meta({ description: 'The API key id or the user id; null for `system`.' }),
        name: z.string().nullable().meta({ description: "The API key's name, or the person's name when known." }),
      })
      .meta({ description: 'Who made the change.' }),
    action: z.string().meta({ description: '`<resource>.<verb>`, e.g. `task.created`, `task.updated`, `webhook.secret_rotated`, `member.role_changed`.', examples: ['task.updated'] }),
    resource: z.object({
      type: z.string().meta({ description: '`project`, `section`, `task`, `comment`, `attachment`, `webhook`, `apiKey`, `member`, `label`, `workspace`.' }),
      id: z.string(),
    }),
    changes: z.array(z.string()).meta({ description: 'Names of the fields a change set (never their values); empty for creations and deletions.', examples: [['name', 'statusId']] }),
    requestId: z.string().nullable().meta({ description: 'The `X-Request-Id` of the request that made the change.' }),
  })
  .meta({ id: 'AuditEntry' });
export type AuditEntry = z.output<typeof AuditEntry>;

const orNull = (value: string): string | null => (value === '' ? null : value);

export function toAuditEntry(event: AuditEvent__Output): AuditEntry {
  const type = (actorTypes as readonly string[]).includes(event.actor?.type ?? '') ? (event.actor!.type as AuditEntry['actor']['type']) : 'system';
  return {
    id: event.id,
    at: new Date(Number(event.atMs)).toISOString(),
    actor: { type, id: orNull(event.actor?.id ?? ''), name: orNull(event.actor?.name ?? '') },
    action: event.action,
    resource: { type: event.resourceType, id: event.resourceId },
    changes: event.changes,
    requestId: orNull(event.requestId),
  };
}
