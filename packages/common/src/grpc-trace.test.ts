import * as grpc from '@grpc/grpc-js';
import { context, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, TraceFlags } from '@opentelemetry/api';
import { AlwaysOnSampler, InMemorySpanExporter, ParentBasedSampler, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace';
import { service as healthService } from 'grpc-health-check';
import { Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DomainError } from './errors.js';
import { callServerStream, callUnary } from './grpc-client.js';
import { unary } from './grpc-server.js';
import { serverAddressOf } from './grpc-trace.js';
import { createLogger } from './logger.js';
import { grpcServerMetrics } from './metrics.js';
import { flushTracing, setTracingShutdown } from './trace-context.js';
import { startTraceSdk } from './tracing-sdk.js';

type Check = (request: { service: string }, callback: grpc.requestCallback<{ status: string }>) => grpc.ClientUnaryCall;
type HealthClient = grpc.Client & {
  check: Check;
  watch: (request: { service: string }, metadata: grpc.Metadata, options: grpc.CallOptions) => grpc.ClientReadableStream<{ status: string }>;
};
const HealthClientConstructor = grpc.makeClientConstructor(healthService as unknown as grpc.ServiceDefinition, 'grpc.health.v1.Health') as unknown as new (
  target: string,
  credentials: grpc.ChannelCredentials,
) => HealthClient;

/**
 * gRPC spans made by the project's own call wrappers (grpc-trace.ts), on a real grpc-js server on
 * loopback: the health service's `Check`, served through `unary()`, answers per the service asked for.
 */
describe('gRPC call spans (grpc-trace.ts)', () => {
  const exporter = new InMemorySpanExporter();
  const processor = new SimpleSpanProcessor({ exporter });
  let server: grpc.Server;
  let client: HealthClient;
  let port: number;
  /** The trace id each served call saw as active. */
  const seenTraceIds: string[] = [];

  beforeAll(async () => {
    const stop = startTraceSdk({ spanProcessors: [processor], sampler: new ParentBasedSampler({ root: new AlwaysOnSampler() }), unsampledParentsDecide: true });
    setTracingShutdown(stop);
    const options = { service: 'grpc.health.v1.Health', logger: createLogger('test', 'silent'), metrics: grpcServerMetrics(new Registry()) };
    const check = unary<{ service: string }, { status: string }>(
      'Check',
      async (request) => {
        seenTraceIds.push(trace.getActiveSpan()?.spanContext().traceId ?? 'none');
        if (request.service === 'missing') throw new DomainError('not_found', 'no such service');
        if (request.service === 'broken') throw new Error('a bug');
        return { status: 'SERVING' };
      },
      options,
    );
    const watch: grpc.handleServerStreamingCall<{ service: string }, { status: string }> = (call) => {
      call.write({ status: 'SERVING' });
      if (call.request.service === 'gone') call.emit('error', { code: grpc.status.UNAVAILABLE, details: 'gone' });
      else call.end();
    };
    server = new grpc.Server();
    server.addService(healthService as unknown as grpc.ServiceDefinition, { Check: check, Watch: watch });
    port = await new Promise<number>((resolve, reject) =>
      server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (error, bound) => (error ? reject(error) : resolve(bound))),
    );
    client = new HealthClientConstructor(`dns:127.0.0.1:${port}`, grpc.credentials.createInsecure());
  });
  afterAll(async () => {
    client.close();
    server.forceShutdown();
    await flushTracing();
  });

  const traceOf = (id: string, sampled: boolean) =>
    trace.setSpanContext(ROOT_CONTEXT, { traceId: id.repeat(32), spanId: id.repeat(16), traceFlags: sampled ? TraceFlags.SAMPLED : TraceFlags.NONE, isRemote: true });

  async function spansOf(traceId: string): Promise<ReadableSpan[]> {
    await processor.forceFlush();
    return exporter.getFinishedSpans().filter((span) => span.spanContext().traceId === traceId);
  }

  it('a sampled call: a CLIENT span with the RPC and the peer, the SERVER span its child, the handler in the caller’s trace', async () => {
    const answer = await context.with(traceOf('a', true), () => callUnary(client, client.check, { service: '' }));
    expect(answer.status).toBe('SERVING');
    const spans = await spansOf('a'.repeat(32));
    const clientSpan = spans.find((span) => span.kind === SpanKind.CLIENT)!;
    const serverSpan = spans.find((span) => span.kind === SpanKind.SERVER)!;
    expect(clientSpan).toMatchObject({ name: 'grpc.grpc.health.v1.Health/Check', parentSpanContext: { spanId: 'a'.repeat(16) } });
    expect(clientSpan.attributes).toEqual({
      'rpc.system': 'grpc',
      'rpc.service': 'grpc.health.v1.Health',
      'rpc.method': 'Check',
      'server.address': '127.0.0.1',
      'server.port': port,
      'rpc.grpc.status_code': grpc.status.OK,
    });
    expect(serverSpan.name).toBe('grpc.grpc.health.v1.Health/Check');
    expect(serverSpan.parentSpanContext?.spanId).toBe(clientSpan.spanContext().spanId);
    expect(serverSpan.attributes).toEqual({ 'rpc.system': 'grpc', 'rpc.service': 'grpc.health.v1.Health', 'rpc.method': 'Check', 'rpc.grpc.status_code': 0 });
    expect(seenTraceIds.at(-1)).toBe('a'.repeat(32));
  });

  it('an unsampled call: no span recorded anywhere, yet the server runs in the caller’s trace (flags 00 passed on)', async () => {
    await context.with(traceOf('b', false), () => callUnary(client, client.check, { service: '' }));
    expect(await spansOf('b'.repeat(32))).toEqual([]);
    expect(seenTraceIds.at(-1)).toBe('b'.repeat(32));
  });

  it('failures: every one is an error of the CLIENT span; only a server fault is one of the SERVER span', async () => {
    await expect(context.with(traceOf('c', true), () => callUnary(client, client.check, { service: 'missing' }))).rejects.toMatchObject({ code: grpc.status.NOT_FOUND });
    await expect(context.with(traceOf('d', true), () => callUnary(client, client.check, { service: 'broken' }))).rejects.toMatchObject({ code: grpc.status.INTERNAL });
    const [notFound, internal] = [await spansOf('c'.repeat(32)), await spansOf('d'.repeat(32))];
    const kindOf = (spans: ReadableSpan[], kind: SpanKind) => spans.find((span) => span.kind === kind)!;
    expect(kindOf(notFound, SpanKind.CLIENT).status.code).toBe(SpanStatusCode.ERROR);
    expect(kindOf(notFound, SpanKind.CLIENT).attributes['rpc.grpc.status_code']).toBe(grpc.status.NOT_FOUND);
    expect(kindOf(notFound, SpanKind.SERVER).status.code).toBe(SpanStatusCode.UNSET);
    expect(kindOf(internal, SpanKind.CLIENT).status.code).toBe(SpanStatusCode.ERROR);
    expect(kindOf(internal, SpanKind.SERVER).status.code).toBe(SpanStatusCode.ERROR);
    expect(kindOf(internal, SpanKind.SERVER).attributes['rpc.grpc.status_code']).toBe(grpc.status.INTERNAL);
  });

  it('a server stream’s CLIENT span ends with the stream’s status', async () => {
    const read = (service: string, id: string) =>
      context.with(traceOf(id, true), () =>
        new Promise<grpc.StatusObject>((resolve) => {
          const call = callServerStream('/grpc.health.v1.Health/Watch', `127.0.0.1:${port}`, (metadata) => client.watch({ service }, metadata, {}));
          call.on('data', () => {});
          call.on('error', () => {});
          call.on('status', resolve);
        }),
      );
    expect((await read('', 'e')).code).toBe(grpc.status.OK);
    expect((await read('gone', 'f')).code).toBe(grpc.status.UNAVAILABLE);
    const [ok] = await spansOf('e'.repeat(32));
    const [gone] = await spansOf('f'.repeat(32));
    expect(ok).toMatchObject({ name: 'grpc.grpc.health.v1.Health/Watch', kind: SpanKind.CLIENT, status: { code: SpanStatusCode.UNSET } });
    expect(ok!.attributes['rpc.grpc.status_code']).toBe(grpc.status.OK);
    expect(gone).toMatchObject({ kind: SpanKind.CLIENT, status: { code: SpanStatusCode.ERROR } });
  });

  it('names the peer of every target form grpc-js takes', () => {
    expect(serverAddressOf('dns:///tasks.tws.svc:50051')).toEqual({ 'server.address': 'tasks.tws.svc', 'server.port': 50051 });
    expect(serverAddressOf('dns:127.0.0.1:50051')).toEqual({ 'server.address': '127.0.0.1', 'server.port': 50051 });
    expect(serverAddressOf('tasks:50051')).toEqual({ 'server.address': 'tasks', 'server.port': 50051 });
    expect(serverAddressOf('ipv6:[::1]:50051')).toEqual({ 'server.address': '::1', 'server.port': 50051 });
    expect(serverAddressOf('unix:/run/tasks.sock')).toEqual({ 'server.address': '/run/tasks.sock' });
  });
});
