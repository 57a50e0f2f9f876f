import * as grpc from '@grpc/grpc-js';
import { service as healthService } from 'grpc-health-check';
import { Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from './logger.js';
import { callUnary, grpcClientOptions, type CallError } from './grpc-client.js';
import { grpcClientMetrics } from './metrics.js';
import { startGrpcServer, type RunningGrpcServer } from './grpc-server.js';

type CheckMethod = (request: { service: string }, callback: grpc.requestCallback<{ status: string }>) => grpc.ClientUnaryCall;
type HealthClient = grpc.Client & { check: CheckMethod };
const HealthClientConstructor = grpc.makeClientConstructor(
  healthService as unknown as grpc.ServiceDefinition,
  'grpc.health.v1.Health',
) as unknown as new (target: string, credentials: grpc.ChannelCredentials, options?: grpc.ClientOptions) => HealthClient;

describe('gRPC client metrics interceptor', () => {
  let server: RunningGrpcServer;
  beforeAll(async () => {
    server = await startGrpcServer([], { host: '127.0.0.1', port: 0, logger: createLogger('test', 'silent') });
  });
  afterAll(() => server.shutdown(1_000));

  it('passes responses and statuses through and records each call by method and code', async () => {
    const registry = new Registry();
    const client = new HealthClientConstructor(
      `127.0.0.1:${server.port}`,
      grpc.credentials.createInsecure(),
      grpcClientOptions('grpc.health.v1.Health', grpcClientMetrics(registry)),
    );
    const serving = await callUnary(client, client.check, { service: '' });
    expect(serving.status).toBe('SERVING');
    const unknown = await callUnary(client, client.check, { service: 'no.such.Service' }).catch((error: grpc.ServiceError) => error);
    expect((unknown as grpc.ServiceError).code).toBe(grpc.status.NOT_FOUND);
    client.close();

    const metric = await registry.getSingleMetricAsString('grpc_client_handling_seconds');
    expect(metric).toContain('grpc_client_handling_seconds_count{grpc_service="grpc.health.v1.Health",grpc_method="Check",grpc_code="OK"} 1');
    expect(metric).toContain('grpc_client_handling_seconds_count{grpc_service="grpc.health.v1.Health",grpc_method="Check",grpc_code="NOT_FOUND"} 1');
  });

  it('starts a call without capturing the caller\'s stack, names the RPC of a failed call, and leaves Error.stackTraceLimit as it was', async () => {
    const client = new HealthClientConstructor(`127.0.0.1:${server.port}`, grpc.credentials.createInsecure(), grpcClientOptions('grpc.health.v1.Health'));
    const limit = Error.stackTraceLimit;
    const failed = (await callUnary(client, client.check, { service: 'no.such.Service' }).catch((error: unknown) => error)) as CallError;
    expect(failed.code).toBe(grpc.status.NOT_FOUND);
    expect(failed.grpcMethod).toBe('/grpc.health.v1.Health/Check');
    // grpc-js appends the caller's stack after "for call at"; none was captured, so this file is not in it.
    expect(failed.stack).toContain('for call at');
    expect(failed.stack).not.toContain('grpc-client.test');
    expect(Error.stackTraceLimit).toBe(limit);
    // A method that throws as it starts: the call fails with it, and the limit is still restored.
    const throwing = (() => {
      throw new Error('cannot start');
    }) as unknown as CheckMethod;
    await expect(callUnary(client, throwing, { service: '' })).rejects.toThrow('cannot start');
    expect(Error.stackTraceLimit).toBe(limit);
    // Errors made after the call started have their stacks again.
    expect(new Error('later').stack).toContain('grpc-client.test');
    client.close();
  });
});
