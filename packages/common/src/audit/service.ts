import type * as grpc from '@grpc/grpc-js';
import { z } from 'zod';
import type { Logger } from 'pino';
import type { Pool } from '../db.js';
import { invalid } from '../errors.js';
import type { GrpcServerMetrics } from '../metrics.js';
import { PeriodicJob } from '../periodic.js';
import { unary, type GrpcServiceRegistration } from '../grpc-server.js';
import { listAudit, sweepAudit, type AuditRow } from './store.js';

/** The retention sweep of `audit_events`: every replica may run it (idempotent, small batches). */
export function auditRetention(options: { pool: Pool; retentionDays: number; intervalMs: number; logger: Logger }): PeriodicJob {
  const { pool, retentionDays, logger } = options;
  return new PeriodicJob({
    name: 'audit retention',
    intervalMs: options.intervalMs,
    firstRunAfterMs: Math.min(options.intervalMs, 60_000),
    logger,
    run: async () => {
      const removed = await sweepAudit(pool, retentionDays);
      if (removed > 0) logger.info({ removed, days: retentionDays }, 'audit retention');
    },
  });
}

// The shapes of audit.v1 (proto/audit/v1/audit.proto) as proto-loader hands them over; common does not
// depend on the generated types, so the request is parsed here like any other edge input.
const Uuid = z.guid().max(36);
const ListAuditRequest = z.object({
  workspaceId: Uuid,
  before: z.object({ atMs: z.string().regex(/^\d{1,15}$/), id: Uuid }).nullish(),
  limit: z.number().int().min(1).max(201),
});

interface AuditEventMessage {
  id: string;
  atMs: string;
  actor: { type: string; id: string; name: string };
  action: string;
  resourceType: string;
  resourceId: string;
  changes: string[];
  requestId: string;
}

const toMessage = (row: AuditRow): AuditEventMessage => ({
  id: row.id,
  atMs: String(row.at.getTime()),
  actor: { type: row.actor.type, id: row.actor.id ?? '', name: row.actor.name ?? '' },
  action: row.action,
  resourceType: row.resourceType,
  resourceId: row.resourceId,
  changes: [...row.changes],
  requestId: row.requestId ?? '',
});

/**
 * `audit.v1.AuditService` of a service over its own `audit_events`: pass the definition loaded from
 * proto-types (`loadAuditProto().audit.v1.AuditService.service`).
 */
export function auditServiceRegistration(
  definition: grpc.ServiceDefinition,
  deps: { pool: Pool; logger: Logger; metrics: GrpcServerMetrics },
): GrpcServiceRegistration {
  const options = { service: 'audit.v1.AuditService', logger: deps.logger, metrics: deps.metrics };
  return {
    name: 'audit.v1.AuditService',
    definition,
    implementation: {
      ListAudit: unary<unknown, { events: AuditEventMessage[] }>(
        'ListAudit',
        async (request) => {
          const parsed = ListAuditRequest.safeParse(request);
          if (!parsed.success) throw invalid(`invalid ListAudit request: ${parsed.error.issues[0]?.path.join('.') ?? ''}`);
          const { workspaceId, before, limit } = parsed.data;
          const rows = await listAudit(deps.pool, {
            workspaceId: workspaceId.toLowerCase(),
            before: before ? { at: new Date(Number(before.atMs)), id: before.id.toLowerCase() } : undefined,
            limit,
          });
          return { events: rows.map(toMessage) };
        },
        options,
      ),
    },
  };
}
