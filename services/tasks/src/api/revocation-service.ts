import * as grpc from '@grpc/grpc-js';
import { unary, type GrpcServerMetrics, type Logger, type Pool } from '@tws/common';
import type { RevocationServiceHandlers } from '@tws/proto-types/generated/tasks/v1/RevocationService';
import type { WatchRevocationsRequest__Output } from '@tws/proto-types/generated/tasks/v1/WatchRevocationsRequest';
import type { WatchRevocationsResponse } from '@tws/proto-types/generated/tasks/v1/WatchRevocationsResponse';
import type { RevocationKind } from '@tws/proto-types/generated/tasks/v1/RevocationKind';
import { announceGrantRevocation, listRevokedGrants } from '../domain/grant-revocations.js';
import type { Revocations } from '../domain/revocation-publisher.js';
import type { CloseKind, RevocationHub, WatcherEvent, WatcherHandle } from '../domain/revocation-hub.js';

/** Messages a stream may have queued and not yet handed to HTTP/2 before its watcher counts as too slow. */
const maxQueued = 64;
/** A stream must subscribe (send its first message) within this long. */
const subscribeTimeoutMs = 10_000;
const maxWatcherName = 200;
const maxRevocationId = 64;

const kinds: Record<string, RevocationKind> = {
  api_key: 'REVOCATION_KIND_API_KEY',
  membership: 'REVOCATION_KIND_MEMBERSHIP',
  grant: 'REVOCATION_KIND_GRANT',
};

function responseOf(event: WatcherEvent): WatchRevocationsResponse {
  switch (event.type) {
    case 'ready':
      return { ready: { heartbeatIntervalMs: event.heartbeatIntervalMs } };
    case 'heartbeat':
      return { heartbeat: {} };
    case 'revocation': {
      const { notice } = event;
      return {
        revocation: {
          id: notice.id,
          kind: kinds[notice.kind] ?? 'REVOCATION_KIND_UNSPECIFIED',
          workspaceId: 'workspaceId' in notice ? notice.workspaceId : '',
          apiKeyId: notice.kind === 'api_key' ? notice.apiKeyId : '',
          userId: notice.kind === 'membership' ? notice.userId : '',
          revokedAtMs: String(notice.at),
          grantId: notice.kind === 'grant' ? notice.grantId : '',
          expiresAtMs: notice.kind === 'grant' ? String(notice.expiresAt) : '0',
        },
      };
    }
  }
}

const statusOf: Record<CloseKind, grpc.status> = {
  unavailable: grpc.status.UNAVAILABLE,
  exhausted: grpc.status.RESOURCE_EXHAUSTED,
};

/**
 * tasks.v1.RevocationService: adapts each WatchRevocations stream to the replica's RevocationHub.
 * The first client message subscribes (watcher name, bounded); later ones acknowledge revocations.
 */
export function revocationServiceHandlers(deps: {
  hub: RevocationHub;
  logger: Logger;
  metrics: GrpcServerMetrics;
  pool: Pool;
  revocations: Revocations;
}): RevocationServiceHandlers {
  const labels = { grpc_service: 'tasks.v1.RevocationService', grpc_method: 'WatchRevocations' };
  const options = { service: 'tasks.v1.RevocationService', logger: deps.logger, metrics: deps.metrics };
  return {
    AnnounceGrantRevocation: unary(
      'AnnounceGrantRevocation',
      async (request) => {
        const confirmation = await announceGrantRevocation(deps.pool, deps.revocations, {
          grantId: request.grantId,
          expiresAtMs: Number(request.expiresAtMs),
          actorUserId: request.actorUserId,
        });
        deps.logger.info({ grantId: request.grantId, actorUserId: request.actorUserId || undefined, confirmed: confirmation.confirmed }, 'grant revocation announced');
        return { confirmed: confirmation.confirmed };
      },
      options,
    ),
    ListRevokedGrants: unary(
      'ListRevokedGrants',
      async (request) => {
        const listed = await listRevokedGrants(deps.pool, { grantId: request.grantId, limit: request.limit });
        return {
          grants: listed.grants.map((grant) => ({ grantId: grant.grantId, expiresAtMs: String(grant.expiresAt.getTime()) })),
          truncated: listed.truncated,
        };
      },
      options,
    ),
    WatchRevocations(call: grpc.ServerDuplexStream<WatchRevocationsRequest__Output, WatchRevocationsResponse>) {
      let handle: WatcherHandle | undefined;
      let subscribed = false;
      let finished = false;
      const finish = (code: grpc.status): void => {
        if (finished) return;
        finished = true;
        clearTimeout(subscribeTimer);
        deps.metrics.handled.inc({ ...labels, grpc_code: grpc.status[code] ?? String(code) });
      };
      const fail = (code: grpc.status, details: string): void => {
        finish(code);
        call.emit('error', { code, details, name: 'RevocationStreamClosed', message: details });
      };
      const subscribeTimer = setTimeout(() => {
        if (!subscribed) fail(grpc.status.DEADLINE_EXCEEDED, `subscribe within ${subscribeTimeoutMs} ms`);
      }, subscribeTimeoutMs);

      call.on('data', (request: WatchRevocationsRequest__Output) => {
        if (finished) return;
        if (!subscribed) {
          subscribed = true;
          clearTimeout(subscribeTimer);
          const name = (request.watcher || call.getPeer()).slice(0, maxWatcherName);
          handle = deps.hub.subscribe(name, {
            send(event) {
              if (finished || call.writableLength >= maxQueued) return false;
              call.write(responseOf(event));
              return true;
            },
            close(kind, details) {
              if (!finished) fail(statusOf[kind], details);
            },
          });
          return;
        }
        const id = request.appliedRevocationId;
        if (id && id.length <= maxRevocationId) handle?.acknowledge(id);
      });
      const leave = (): void => {
        handle?.leave();
        handle = undefined;
      };
      call.on('cancelled', () => {
        leave();
        finish(grpc.status.CANCELLED);
      });
      call.on('error', leave);
      call.on('end', () => {
        // The client half-closed: it is leaving.
        leave();
        if (!finished) {
          finish(grpc.status.OK);
          call.end();
        }
      });
    },
  };
}
