import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type { RateLimitSyncMetrics } from './domain/rate-limit/sync.js';
import { grpcClientMetrics, httpRequestDurationMetric, type GrpcClientMetrics } from '@tws/common';

export interface GatewayMetrics {
  /** Calls to the backends, by service, method and status (clients/backends.ts). */
  grpcClient: GrpcClientMetrics;
  /** The HTTP RED histogram of every route (plugins/ops.ts). */
  httpRequestDuration: Histogram<'method' | 'route' | 'status_code'>;
  /** The revocation stream from tasks (plugins/revocations.ts). */
  revocations: RevocationMetrics;
  /** MCP tool calls and resource reads (api/mcp). */
  mcp: McpMetrics;
  /** The shared rate limit's sync with the tasks service (plugins/rate-limit-sync.ts). */
  rateLimitSync: RateLimitSyncMetrics;
  /** Large task lists read with StreamTasks, by how each read was served (clients/shared-task-list.ts). */
  taskListStreamReads: Counter<'kind'>;
}

export interface McpMetrics {
  /** By tool name (or `resource:task`, or `unknown`) and outcome. */
  calls: Counter<'tool' | 'outcome'>;
  duration: Histogram<'tool'>;
}

export interface RevocationMetrics {
  received: Counter<'kind'>;
  connected: Gauge;
  /** From the revoking transaction (tasks' clock) to the eviction here (this clock). */
  lag: Histogram;
}

export function gatewayMetrics(registry: Registry): GatewayMetrics {
  return {
    grpcClient: grpcClientMetrics(registry),
    httpRequestDuration: httpRequestDurationMetric(registry),
    mcp: {
      calls: new Counter({
        name: 'mcp_tool_calls_total',
        help: 'MCP tool calls and resource reads, by tool and outcome (ok, tool_error, refused, invalid, timeout, error).',
        labelNames: ['tool', 'outcome'],
        registers: [registry],
      }),
      duration: new Histogram({
        name: 'mcp_tool_call_duration_seconds',
        help: 'Time to answer one MCP tool call or resource read, by tool.',
        labelNames: ['tool'],
        buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
        registers: [registry],
      }),
    },
    taskListStreamReads: new Counter({
      name: 'task_list_stream_reads_total',
      help: 'Reads of large task lists (StreamTasks) by kind: opened (a call of its own), joined (the call of a read of the same list that came at the same time, its snapshot at least as new as the list when the joiner came), detached (a read that fell over 2 MiB behind, held the others for 500 ms in all, and continued on a call of its own).',
      labelNames: ['kind'],
      registers: [registry],
    }),
    rateLimitSync: {
      syncs: new Counter({
        name: 'rate_limit_syncs_total',
        help: 'Syncs of the shared rate-limit buckets with the tasks service, by outcome (ok, error).',
        labelNames: ['outcome'],
        registers: [registry],
      }),
      shared: new Gauge({
        name: 'rate_limit_shared',
        help: '1 while the request limit is shared by the replicas, 0 while this replica limits alone at 1/replicas of it (the last sync failed).',
        registers: [registry],
      }),
      replicas: new Gauge({
        name: 'rate_limit_replicas',
        help: 'Gateway replicas that synced their rate-limit usage in the last 30 s, as the last sync reported.',
        registers: [registry],
      }),
    },
    revocations: {
      received: new Counter({
        name: 'auth_revocations_received_total',
        help: 'Revocations received on the revocation stream and applied to the auth caches, by kind.',
        labelNames: ['kind'],
        registers: [registry],
      }),
      connected: new Gauge({
        name: 'auth_revocation_stream_connected',
        help: '1 while the revocation stream is ready (auth caches in use), 0 while they are bypassed.',
        registers: [registry],
      }),
      lag: new Histogram({
        name: 'auth_revocation_lag_seconds',
        help: 'From the revoking transaction in tasks to the eviction in this gateway (two clocks: approximate).',
        buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
        registers: [registry],
      }),
    },
  };
}
