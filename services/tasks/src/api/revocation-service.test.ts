import * as grpc from '@grpc/grpc-js';
import { createLogger, grpcServerMetrics, type Pool } from '@tws/common';
import { loadTasksProto } from '@tws/proto-types';
import type { RevocationServiceClient } from '@tws/proto-types/generated/tasks/v1/RevocationService';
import type { WatchRevocationsResponse__Output } from '@tws/proto-types/generated/tasks/v1/WatchRevocationsResponse';
import { Registry } from 'prom-client';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { createRevocationMetrics } from '../metrics.js';
import { RevocationHub } from '../domain/revocation-hub.js';
import type { Revocations } from '../domain/revocation-publisher.js';
import { apiKeyRevoked } from '../domain/revocations.js';
import { revocationServiceHandlers } from './revocation-service.js';

const workspace = '0a9f3c52-6c3e-4c39-9d2f-1b1f7c1e0a01';
const key = '7c1d2e3f-4a5b-4c6d-8e7f-9a0b1c2d3e03';

/** The WatchRevocations adapter over real gRPC (HTTP/2, the proto codec) in front of a real hub. */
describe('tasks.v1.RevocationService.WatchRevocations', () => {
  let server: grpc.Server;
  let client: RevocationServiceClient;
  let hub: RevocationHub;
  let acked: string[];

  beforeEach(async () => {
    acked = [];
    const registry = new Registry();
    const logger = createLogger('tasks', 'silent');
    hub = new RevocationHub({
      replicaId: 'r1',
      heartbeatIntervalMs: 500,
      ackTimeoutMs: 2_000,
      maxWatchers: 2,
      maxUnacked: 8,
      logger,
      metrics: createRevocationMetrics(registry).hub,
      onReplicaAcked: (id) => acked.push(id),
    });
    const proto = loadTasksProto().tasks.v1;
    server = new grpc.Server();
    server.addService(proto.RevocationService.service, revocationServiceHandlers({
        hub,
        logger,
        metrics: grpcServerMetrics(registry),
        // Only WatchRevocations is exercised here; the grant RPCs need a database (test/e2e/mcp-oauth.test.ts).
        pool: undefined as unknown as Pool,
        revocations: undefined as unknown as Revocations,
      }));
    const port = await new Promise<number>((resolve, reject) =>
      server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (error, bound) => (error ? reject(error) : resolve(bound))),
    );
    client = new proto.RevocationService(`127.0.0.1:${port}`, grpc.credentials.createInsecure());
  });
  afterEach(() => {
    client.close();
    server.forceShutdown();
  });

  function watch() {
    const call = client.WatchRevocations();
    const messages: WatchRevocationsResponse__Output[] = [];
    const status = new Promise<grpc.StatusObject>((resolve) => call.on('status', resolve));
    call.on('data', (message: WatchRevocationsResponse__Output) => messages.push(message));
    call.on('error', () => undefined);
    call.write({ watcher: 'unit-test-gateway' });
    return { call, messages, status };
  }

  const until = async (condition: () => boolean): Promise<void> => {
    const deadline = Date.now() + 3_000;
    while (!condition()) {
      if (Date.now() > deadline) throw new Error('condition not met in time');
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  };

  test('ready first, then each revocation; the acknowledgement reaches the hub', async () => {
    hub.listenerUp();
    const { call, messages } = watch();
    await until(() => messages.length === 1);
    expect(messages[0]).toMatchObject({ event: 'ready', ready: { heartbeatIntervalMs: 500 } });
    const notice = apiKeyRevoked(workspace, key);
    hub.deliver(notice);
    await until(() => messages.length === 2);
    expect(messages[1]).toMatchObject({
      event: 'revocation',
      revocation: { id: notice.id, kind: 'REVOCATION_KIND_API_KEY', workspaceId: workspace, apiKeyId: key, userId: '', revokedAtMs: String(notice.at) },
    });
    expect(acked).toEqual([]);
    call.write({ appliedRevocationId: notice.id });
    await until(() => acked.length === 1);
    expect(acked).toEqual([notice.id]);
    hub.heartbeat();
    await until(() => messages.length === 3);
    expect(messages[2]?.event).toBe('heartbeat');
    call.end();
  });

  test('UNAVAILABLE while the replica does not hear revocations; RESOURCE_EXHAUSTED over the watcher bound', async () => {
    const refused = watch();
    expect((await refused.status).code).toBe(grpc.status.UNAVAILABLE);
    expect(refused.messages).toEqual([]);

    hub.listenerUp();
    const a = watch();
    const b = watch();
    await until(() => a.messages.length === 1 && b.messages.length === 1);
    const c = watch();
    expect((await c.status).code).toBe(grpc.status.RESOURCE_EXHAUSTED);

    hub.listenerDown('connection reset');
    expect((await a.status).code).toBe(grpc.status.UNAVAILABLE);
    expect((await b.status).code).toBe(grpc.status.UNAVAILABLE);
  });

  test('closeAll ends the streams, so a graceful server shutdown does not wait for them', async () => {
    hub.listenerUp();
    const a = watch();
    await until(() => a.messages.length === 1);
    hub.closeAll('shutting down');
    const started = Date.now();
    await new Promise<void>((resolve) => server.tryShutdown(() => resolve()));
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(await a.status).toMatchObject({ code: grpc.status.UNAVAILABLE, details: 'shutting down' });
  });

  test('a watcher that leaves no longer holds a revocation back', async () => {
    hub.listenerUp();
    const a = watch();
    await until(() => a.messages.length === 1);
    const notice = apiKeyRevoked(workspace, key);
    hub.deliver(notice);
    await until(() => a.messages.length === 2);
    a.call.cancel();
    await until(() => acked.length === 1);
    expect(hub.watcherCount).toBe(0);
  });
});
