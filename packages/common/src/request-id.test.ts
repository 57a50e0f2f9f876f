import * as grpc from '@grpc/grpc-js';
import { Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callUnary, grpcClientOptions } from './grpc-client.js';
import { startGrpcServer, unary, type RunningGrpcServer } from './grpc-server.js';
import { createLogger } from './logger.js';
import { grpcServerMetrics } from './metrics.js';
import {
  currentRequestId,
  fastifyRequestIdOptions,
  isSaneRequestId,
  requestIdMetadataKey,
  requestIdOf,
  runWithRequestId,
} from './request-id.js';

describe('the request-id rule', () => {
  it('keeps a sane id: 1–128 characters of letters, digits and - _ . : / + = @', () => {
    for (const id of ['a', '0b6c8c8e-7c1f-4b1e-9a53-2f6f1c1d9e11', '01HZX3K9Q8', 'svc:42/x+y=z@host_a.b', 'x'.repeat(128)]) {
      expect(isSaneRequestId(id), id).toBe(true);
      expect(requestIdOf(id)).toBe(id);
    }
  });

  it('replaces an empty, too long, repeated or unsafe id with a new UUID', () => {
    const insane: Array<string | string[] | undefined> = [
      undefined,
      '',
      'x'.repeat(129),
      ['a', 'b'],
      'has space',
      'line\nbreak',
      'tab\there',
      'nul\u0000',
      'quote"',
      "quote'",
      'back\\slash',
      'semi;colon',
      '<script>',
      'ünïcode',
      '\u001b[31mred',
    ];
    for (const sent of insane) {
      const id = requestIdOf(sent);
      expect(id, JSON.stringify(sent)).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    }
    expect(requestIdOf(undefined)).not.toBe(requestIdOf(undefined));
  });

  it('gives fastify no header to take as it is: genReqId applies the rule', () => {
    expect(fastifyRequestIdOptions.requestIdHeader).toBe(false);
    expect(fastifyRequestIdOptions.genReqId({ headers: { 'x-request-id': 'client-1' } })).toBe('client-1');
    expect(fastifyRequestIdOptions.genReqId({ headers: { 'x-request-id': 'bad id' } })).not.toBe('bad id');
  });
});

/** Log lines written by a logger, parsed. */
function captureLogs(): { lines: Array<Record<string, unknown>>; write(text: string): void } {
  const lines: Array<Record<string, unknown>> = [];
  return { lines, write: (text) => lines.push(JSON.parse(text) as Record<string, unknown>) };
}

describe('the log mixin', () => {
  it('adds reqId inside a request and nothing outside; a logger binding its own reqId keeps only that one', () => {
    const logs = captureLogs();
    const logger = createLogger('test', 'info', logs);
    logger.info('outside');
    runWithRequestId('req-a', () => {
      logger.info('inside');
      logger.child({ reqId: 'bound' }).info('bound child');
    });
    expect(logs.lines.map((line) => line.reqId)).toEqual([undefined, 'req-a', 'bound']);
  });
});

// A JSON-coded echo service: the handler answers with the request id it runs under.
const echoDefinition: grpc.ServiceDefinition = {
  Echo: {
    path: '/test.v1.EchoService/Echo',
    requestStream: false,
    responseStream: false,
    requestSerialize: (value: unknown) => Buffer.from(JSON.stringify(value)),
    requestDeserialize: (bytes: Buffer) => JSON.parse(bytes.toString()) as unknown,
    responseSerialize: (value: unknown) => Buffer.from(JSON.stringify(value)),
    responseDeserialize: (bytes: Buffer) => JSON.parse(bytes.toString()) as unknown,
  },
};
interface EchoResponse {
  requestId: string | null;
}
type EchoMethod = (request: object, callback: grpc.requestCallback<EchoResponse>) => grpc.ClientUnaryCall;
type EchoClient = grpc.Client & { Echo: EchoMethod };
const EchoClientConstructor = grpc.makeClientConstructor(echoDefinition, 'test.v1.EchoService') as unknown as new (
  target: string,
  credentials: grpc.ChannelCredentials,
  options?: grpc.ClientOptions,
) => EchoClient;

describe('x-request-id across gRPC (client interceptor → server context)', () => {
  const logs = captureLogs();
  let server: RunningGrpcServer;
  let client: EchoClient;
  beforeAll(async () => {
    const logger = createLogger('test', 'debug', logs);
    const handler = unary(
      'Echo',
      async () => {
        await new Promise((resolve) => setTimeout(resolve, 5));
        logger.info('handling');
        return { requestId: currentRequestId() ?? null };
      },
      { service: 'test.v1.EchoService', logger, metrics: grpcServerMetrics(new Registry()) },
    );
    server = await startGrpcServer([{ name: 'test.v1.EchoService', definition: echoDefinition, implementation: { Echo: handler } }], {
      host: '127.0.0.1',
      port: 0,
      logger,
    });
    client = new EchoClientConstructor(`127.0.0.1:${server.port}`, grpc.credentials.createInsecure(), grpcClientOptions('test.v1.EchoService'));
  });
  afterAll(async () => {
    client.close();
    await server.shutdown(1_000);
  });

  it('sends the id of the request being served; the handler and its log lines run under it', async () => {
    logs.lines.length = 0;
    const response = await runWithRequestId('req-42', () => callUnary(client, client.Echo, {}));
    expect(response.requestId).toBe('req-42');
    const handling = logs.lines.find((line) => line.msg === 'handling');
    const finished = logs.lines.find((line) => line.msg === 'gRPC call finished');
    expect(handling?.reqId).toBe('req-42');
    expect(finished).toMatchObject({ reqId: 'req-42', method: 'Echo', code: 'OK' });
  });

  it('sends none outside a request, and keeps an id the caller set itself', async () => {
    expect((await callUnary(client, client.Echo, {})).requestId).toBeNull();
    const metadata = new grpc.Metadata();
    metadata.set(requestIdMetadataKey, 'explicit');
    const response = await runWithRequestId('ambient', () => callUnary(client, client.Echo, {}, { metadata }));
    expect(response.requestId).toBe('explicit');
  });

  it('ignores an insane id in metadata (the server applies the same rule)', async () => {
    const metadata = new grpc.Metadata();
    metadata.set(requestIdMetadataKey, 'x'.repeat(200));
    expect((await callUnary(client, client.Echo, {}, { metadata })).requestId).toBeNull();
  });

  it('keeps concurrent requests apart', async () => {
    const ids = Array.from({ length: 20 }, (_, index) => `concurrent-${index}`);
    const responses = await Promise.all(ids.map((id) => runWithRequestId(id, () => callUnary(client, client.Echo, {}))));
    expect(responses.map((response) => response.requestId)).toEqual(ids);
  });
});
