import * as grpc from '@grpc/grpc-js';
import { Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { callUnary, grpcClientOptions } from '../grpc-client.js';
import { startGrpcServer, unary, type RunningGrpcServer } from '../grpc-server.js';
import { createLogger } from '../logger.js';
import { grpcServerMetrics } from '../metrics.js';
import {
  actorMetadataKey,
  AuditActor,
  bindActor,
  currentActor,
  encodeCurrentActor,
  runAsCaller,
  runWithActor,
  systemActor,
} from './actor.js';
import { currentRequestId, runWithRequestId } from '../request-id.js';

// A JSON-coded service whose handler answers with the actor it runs for.
const definition: grpc.ServiceDefinition = {
  Who: {
    path: '/test.v1.ActorService/Who',
    requestStream: false,
    responseStream: false,
    requestSerialize: (value: unknown) => Buffer.from(JSON.stringify(value)),
    requestDeserialize: (bytes: Buffer) => JSON.parse(bytes.toString()) as unknown,
    responseSerialize: (value: unknown) => Buffer.from(JSON.stringify(value)),
    responseDeserialize: (bytes: Buffer) => JSON.parse(bytes.toString()) as unknown,
  },
};
type WhoClient = grpc.Client & { Who: (request: object, callback: grpc.requestCallback<{ actor: AuditActor }>) => grpc.ClientUnaryCall };
const WhoClientConstructor = grpc.makeClientConstructor(definition, 'test.v1.ActorService') as unknown as new (
  target: string,
  credentials: grpc.ChannelCredentials,
  options?: grpc.ClientOptions,
) => WhoClient;

describe('the audit actor across gRPC (edge context → client interceptor → server context)', () => {
  let server: RunningGrpcServer;
  let client: WhoClient;
  const key: AuditActor = { type: 'apiKey', id: '7c1d2e3f-0000-4000-8000-000000000001', name: 'CI — déploiement' };

  beforeAll(async () => {
    const logger = createLogger('test', 'silent');
    const handler = unary('Who', async () => ({ actor: currentActor() }), { service: 'test.v1.ActorService', logger, metrics: grpcServerMetrics(new Registry()) });
    server = await startGrpcServer([{ name: 'test.v1.ActorService', definition, implementation: { Who: handler } }], { host: '127.0.0.1', port: 0, logger });
    client = new WhoClientConstructor(`127.0.0.1:${server.port}`, grpc.credentials.createInsecure(), grpcClientOptions('test.v1.ActorService'));
  });
  afterAll(async () => {
    client?.close();
    await server?.shutdown(100);
  });

  const who = (metadata?: grpc.Metadata) => callUnary(client, client.Who, {}, metadata ? { metadata } : {});

  it('carries the actor of the calling context, names (unicode) included', async () => {
    expect((await runWithActor(key, () => who())).actor).toEqual(key);
  });

  it('is `system` without an actor, and for a request whose actor was never named', async () => {
    expect((await who()).actor).toEqual(systemActor);
    expect((await runWithRequestId('req-unnamed', () => who())).actor).toEqual(systemActor);
    expect(bindActor(key)).toBe(false);
  });

  it('carries an actor bound later on the same request (the web app names the person once it knows the workspace)', async () => {
    const person: AuditActor = { type: 'user', id: 'b1b2b3b4-0000-4000-8000-000000000002', name: null };
    const answer = await runWithRequestId('req-web', async () => {
      await new Promise((resolve) => setTimeout(resolve, 1));
      expect(bindActor(person)).toBe(true);
      return who();
    });
    expect(answer.actor).toEqual(person);
  });

  it('ignores a malformed, oversized or non-binary actor from a caller (recorded as `system`)', async () => {
    const sent = (value: Buffer): grpc.Metadata => {
      const metadata = new grpc.Metadata();
      metadata.set(actorMetadataKey, value);
      return metadata;
    };
    const hostile = [
      Buffer.from('not json'),
      Buffer.from(JSON.stringify({ type: 'root', id: 'x', name: null })),
      Buffer.from(JSON.stringify({ ...key, extra: true })),
      Buffer.from(JSON.stringify({ ...key, id: 'x'.repeat(65) })),
      Buffer.from(JSON.stringify({ ...key, name: 'n'.repeat(2_000) })),
    ];
    for (const value of hostile) expect((await who(sent(value))).actor, value.toString().slice(0, 40)).toEqual(systemActor);
    // A caller's own metadata wins over the context (as for x-request-id).
    const explicit = await runWithActor(key, () => who(sent(Buffer.from(JSON.stringify(systemActor)))));
    expect(explicit.actor).toEqual(systemActor);
  });
});

describe('the actor a backend received', () => {
  const key: AuditActor = { type: 'apiKey', id: '7c1d2e3f-0000-4000-8000-000000000003', name: 'importer' };
  const encoded = Buffer.from(JSON.stringify(key), 'utf8');

  it('is decoded when first asked for, and once: a call that writes no audit row never parses it', () => {
    const parse = vi.spyOn(AuditActor, 'safeParse');
    try {
      runAsCaller(undefined, encoded, () => undefined);
      expect(parse).not.toHaveBeenCalled();
      const seen = runAsCaller(undefined, encoded, () => [currentActor(), currentActor()]);
      expect(seen).toEqual([key, key]);
      expect(parse).toHaveBeenCalledTimes(1);
    } finally {
      parse.mockRestore();
    }
  });

  it('is passed on as it came; an edge encodes its own once for all its calls', () => {
    expect(runAsCaller(undefined, encoded, () => encodeCurrentActor())).toBe(encoded);
    const [first, second] = runWithActor(key, () => [encodeCurrentActor(), encodeCurrentActor()]);
    expect(first).toBe(second);
    expect(JSON.parse(first!.toString('utf8'))).toEqual(key);
    // Bound later (the web app): the new actor is what travels.
    const person: AuditActor = { type: 'user', id: 'b1b2b3b4-0000-4000-8000-000000000004', name: null };
    const rebound = runWithRequestId('req-rebound', () => {
      bindActor(key);
      encodeCurrentActor();
      bindActor(person);
      return encodeCurrentActor().toString('utf8');
    });
    expect(JSON.parse(rebound)).toEqual(person);
  });

  it('is `system` when absent, oversized or malformed, and then not passed on; never the actor of the context around it', () => {
    const cases = [undefined, Buffer.alloc(0), Buffer.from('{"type":'), Buffer.from(JSON.stringify({ ...key, name: 'n'.repeat(1_100) }))];
    for (const value of cases) {
      const [actor, passedOn] = runWithActor(key, () => runAsCaller(undefined, value, () => [currentActor(), encodeCurrentActor()] as const));
      expect(actor).toEqual(systemActor);
      expect(passedOn.length).toBe(0);
    }
  });
});

describe('the scope an actor lives in (call-scope.ts)', () => {
  const key: AuditActor = { type: 'apiKey', id: '7c1d2e3f-0000-4000-8000-000000000005', name: 'sync' };
  const encoded = Buffer.from(JSON.stringify(key), 'utf8');

  it('is the request\'s: an actor named in it is seen by what the request does next, not by the request around it', async () => {
    const seen = await runWithRequestId('outer', async () => {
      const inner = await runWithRequestId('inner', async () => {
        expect(bindActor(key)).toBe(true);
        await new Promise((resolve) => setTimeout(resolve, 1));
        return [currentRequestId(), currentActor()] as const;
      });
      return [inner, [currentRequestId(), currentActor()]] as const;
    });
    expect(seen).toEqual([
      ['inner', key],
      ['outer', systemActor],
    ]);
  });

  it('keeps the actor around a new request id, and the request id around a new actor', () => {
    expect(runWithActor(key, () => runWithRequestId('r-1', () => [currentRequestId(), currentActor()]))).toEqual(['r-1', key]);
    expect(runWithRequestId('r-2', () => runWithActor(key, () => [currentRequestId(), currentActor()]))).toEqual(['r-2', key]);
  });

  it('a caller\'s work gets its request id and its own actor in one scope: the request around it only when it names none', () => {
    const opener: AuditActor = { type: 'apiKey', id: 'k-opener', name: null };
    const [named, unnamed] = runWithActor(opener, () =>
      runWithRequestId('call', () => [runAsCaller('item', encoded, () => [currentRequestId(), currentActor()]), runAsCaller(undefined, undefined, () => [currentRequestId(), currentActor()])]),
    );
    expect(named).toEqual(['item', key]);
    expect(unnamed).toEqual(['call', systemActor]);
  });
});
