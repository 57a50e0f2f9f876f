import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import * as grpc from '@grpc/grpc-js';
import { SignJWT } from 'jose';
import { Registry } from 'prom-client';
import { createLogger } from '@tws/common';
import { loadTasksProto } from '@tws/proto-types';
import { buildApp, type App } from '../app.js';
import { loadConfig } from '../config.js';

/*
 * Test support for the gateway's unit tests (not built into dist): a real gRPC server implementing
 * tasks.v1.TasksService with per-test handlers, and the real gateway app wired to it.
 */

export type FakeHandler = (request: Record<string, unknown>) => unknown;

/** A gRPC failure a fake handler can throw. */
export class RpcFailure extends Error {
  constructor(
    readonly code: grpc.status,
    readonly details: string,
  ) {
    super(details);
  }
}

/** A revocation as the fake sends it (tasks.v1.Revocation). */
export interface FakeRevocation {
  id: string;
  kind: 'REVOCATION_KIND_API_KEY' | 'REVOCATION_KIND_MEMBERSHIP' | 'REVOCATION_KIND_GRANT' | 'REVOCATION_KIND_UNSPECIFIED';
  workspaceId?: string;
  grantId?: string;
  expiresAtMs?: number;
  apiKeyId?: string;
  userId?: string;
  revokedAtMs?: number;
}

type WatchCall = grpc.ServerDuplexStream<Record<string, unknown>, Record<string, unknown>>;

/** The fake's tasks.v1.RevocationService: it answers `ready` (unless told otherwise) and pushes on demand. */
export interface FakeRevocations {
  /** Subscribed streams (after their first message). */
  readonly watchers: Set<WatchCall>;
  /** Ids the watchers acknowledged, in order. */
  readonly acks: string[];
  /** `ready`: subscribe normally; `refuse`: answer UNAVAILABLE; `mute`: subscribe but never say ready. */
  mode: 'ready' | 'refuse' | 'mute';
  heartbeatIntervalMs: number;
  /** What ListRevokedGrants answers (the live revoked OAuth grants); `calls` records its requests. */
  revokedGrants: Array<{ grantId: string; expiresAtMs: number }>;
  listCalls: Array<{ grantId: string; limit: number }>;
  /** Sends a revocation to every watcher; resolves once each acknowledged it (or after 2 s). */
  push(revocation: FakeRevocation): Promise<void>;
  heartbeat(): void;
  /** Ends every stream with UNAVAILABLE (as a tasks replica going away). */
  dropAll(): void;
}

function fakeRevocations(): { fake: FakeRevocations; implementation: grpc.UntypedServiceImplementation } {
  const ackWaiters: Array<{ id: string; resolve: () => void }> = [];
  const fake: FakeRevocations = {
    watchers: new Set(),
    acks: [],
    mode: 'ready',
    heartbeatIntervalMs: 1_000,
    revokedGrants: [],
    listCalls: [],
    async push(revocation) {
      const expected = fake.watchers.size;
      const acked = new Promise<void>((resolve) => {
        let count = 0;
        if (expected === 0) return resolve();
        const timer = setTimeout(resolve, 2_000);
        ackWaiters.push({ id: revocation.id, resolve: () => ++count === expected && (clearTimeout(timer), resolve()) });
      });
      for (const call of fake.watchers) call.write({ revocation: { revokedAtMs: Date.now(), ...revocation } });
      await acked;
    },
    heartbeat() {
      for (const call of fake.watchers) call.write({ heartbeat: {} });
    },
    dropAll() {
      for (const call of fake.watchers) call.emit('error', { code: grpc.status.UNAVAILABLE, details: 'replica going away' });
      fake.watchers.clear();
    },
  };
  const implementation: grpc.UntypedServiceImplementation = {
    ListRevokedGrants(
      call: grpc.ServerUnaryCall<{ grantId: string; limit: number }, unknown>,
      callback: grpc.sendUnaryData<unknown>,
    ) {
      const { grantId, limit } = call.request;
      fake.listCalls.push({ grantId, limit });
      const grants = fake.revokedGrants.filter((grant) => grantId === '' || grant.grantId === grantId);
      callback(null, { grants: grants.slice(0, limit || 10_000), truncated: grants.length > (limit || 10_000) });
    },
    WatchRevocations(call: WatchCall) {
      let subscribed = false;
      call.on('data', (request: Record<string, unknown>) => {
        if (!subscribed) {
          subscribed = true;
          if (fake.mode === 'refuse') return call.emit('error', { code: grpc.status.UNAVAILABLE, details: 'not listening' });
          fake.watchers.add(call);
          if (fake.mode === 'ready') call.write({ ready: { heartbeatIntervalMs: fake.heartbeatIntervalMs } });
          return;
        }
        const id = String(request.appliedRevocationId ?? '');
        fake.acks.push(id);
        for (const waiter of ackWaiters.filter((item) => item.id === id)) waiter.resolve();
      });
      const leave = (): void => {
        fake.watchers.delete(call);
      };
      call.on('cancelled', leave);
      call.on('end', () => {
        leave();
        call.end();
      });
      call.on('error', leave);
    },
  };
  return { fake, implementation };
}

export interface FakeTasks {
  port: number;
  /** tasks.v1.RevocationService of the fake. */
  revocations: FakeRevocations;
  handlers: Map<string, FakeHandler>;
  calls: Array<{ method: string; request: Record<string, unknown> }>;
  callsOf(method: string): Array<Record<string, unknown>>;
  stop(): Promise<void>;
}

/**
 * The request as the client wrote it: the loader's `oneofs: true` adds, on decoding, a property per
 * oneof (including proto3 `optional`'s synthetic `_field`) naming the member that is set.
 */
function withoutOneofNames(value: Record<string, unknown>): Record<string, unknown> {
  const result: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) {
    if (typeof item === 'string' && item !== key && Object.hasOwn(value, item) && (key.startsWith('_') || key === 'value' || key === 'kind')) continue;
    result[key] = item !== null && typeof item === 'object' && !Array.isArray(item) ? withoutOneofNames(item as Record<string, unknown>) : item;
  }
  return result;
}

export async function startFakeTasks(): Promise<FakeTasks> {
  const proto = loadTasksProto();
  // TasksService and IdempotencyService share the handler map (their method names differ).
  const definition = { ...proto.tasks.v1.TasksService.service, ...proto.tasks.v1.IdempotencyService.service };
  const handlers = new Map<string, FakeHandler>();
  const calls: FakeTasks['calls'] = [];
  const implementation: grpc.UntypedServiceImplementation = {};
  for (const [method, methodDefinition] of Object.entries(definition)) {
    if (methodDefinition.responseStream) {
      // A server-streaming fake: the handler answers the messages to send, in order (or throws).
      implementation[method] = (call: grpc.ServerWritableStream<Record<string, unknown>, unknown>) => {
        calls.push({ method, request: call.request });
        const handler = handlers.get(method);
        Promise.resolve()
          .then(() => {
            if (!handler) throw new RpcFailure(grpc.status.UNIMPLEMENTED, `${method} not faked`);
            return handler(call.request);
          })
          .then(
            (messages) => {
              for (const message of messages as unknown[]) call.write(message);
              call.end();
            },
            (error: unknown) =>
              call.emit('error', error instanceof RpcFailure ? { code: error.code, details: error.details } : { code: grpc.status.INTERNAL, details: String(error) }),
          );
      };
      continue;
    }
    implementation[method] = (
      call: grpc.ServerUnaryCall<Record<string, unknown>, unknown>,
      callback: grpc.sendUnaryData<unknown>,
    ) => {
      calls.push({ method, request: call.request });
      const handler = handlers.get(method);
      if (!handler) {
        callback({ code: grpc.status.UNIMPLEMENTED, details: `${method} not faked` });
        return;
      }
      Promise.resolve()
        .then(() => handler(call.request))
        .then(
          (response) => callback(null, response),
          (error: unknown) =>
            callback(
              error instanceof RpcFailure
                ? { code: error.code, details: error.details }
                : { code: grpc.status.INTERNAL, details: String(error) },
            ),
        );
    };
  }
  const server = new grpc.Server();
  for (const service of [proto.tasks.v1.TasksService.service, proto.tasks.v1.IdempotencyService.service]) {
    server.addService(service, Object.fromEntries(Object.keys(service).map((method) => [method, implementation[method]!])));
  }
  const revocations = fakeRevocations();
  server.addService(proto.tasks.v1.RevocationService.service, revocations.implementation);
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (error, bound) => (error ? reject(error) : resolve(bound))),
  );
  return {
    port,
    revocations: revocations.fake,
    handlers,
    calls,
    callsOf: (method) => calls.filter((call) => call.method === method).map((call) => withoutOneofNames(call.request)),
    stop: () =>
      new Promise<void>((resolve) => {
        revocations.fake.dropAll();
        server.tryShutdown(() => resolve());
      }),
  };
}

export const jwtIssuer = 'test-issuer';
export const jwtAudience = 'test-audience';

export interface SigningKey {
  privateKey: KeyObject;
  publicKeyPem: string;
}

export function ed25519Key(): SigningKey {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  return { privateKey, publicKeyPem: publicKey.export({ type: 'spki', format: 'pem' }).toString() };
}

/** Signs a token like the admin CLI does (EdDSA, iss, aud, sub, scope, iat, exp). */
export async function signToken(
  key: SigningKey,
  claims: { sub?: string; scope?: string; iss?: string; aud?: string; expiresIn?: string | number; alg?: string } = {},
): Promise<string> {
  const jwt = new SignJWT(claims.scope === undefined ? {} : { scope: claims.scope })
    .setProtectedHeader({ alg: claims.alg ?? 'EdDSA' })
    .setIssuer(claims.iss ?? jwtIssuer)
    .setAudience(claims.aud ?? jwtAudience)
    .setIssuedAt()
    .setExpirationTime(claims.expiresIn ?? '5m');
  if (claims.sub !== undefined) jwt.setSubject(claims.sub);
  return jwt.sign(key.privateKey);
}

export interface Harness {
  app: App;
  fake: FakeTasks;
  key: SigningKey;
  close(): Promise<void>;
}

/** The real gateway app against a fake tasks service, trusting a fresh Ed25519 key. */
export async function startGateway(
  env: Record<string, string> = {},
  beforeReady?: (app: App) => Promise<void> | void,
  /** Where the app logs (at info) instead of nowhere: for tests that read its lines. */
  logTo?: { write(line: string): void },
): Promise<Harness> {
  const fake = await startFakeTasks();
  const key = ed25519Key();
  const config = loadConfig({
    LOG_LEVEL: 'silent',
    PUBLIC_BASE_URL: 'https://api.example.test',
    TASKS_GRPC_TARGET: `127.0.0.1:${fake.port}`,
    AUTH_JWT_PUBLIC_KEY: key.publicKeyPem,
    AUTH_JWT_ISSUER: jwtIssuer,
    AUTH_JWT_AUDIENCE: jwtAudience,
    ...env,
  });
  const logger = logTo
    ? createLogger('gateway', 'info', logTo)
    : createLogger('gateway', (process.env.GATEWAY_TEST_LOG_LEVEL ?? 'silent') as 'silent');
  const app = await buildApp({ config, logger, registry: new Registry() });
  await beforeReady?.(app);
  await app.ready();
  return {
    app,
    fake,
    key,
    async close() {
      await app.close();
      await fake.stop();
    },
  };
}

export const ids = {
  workspace: '0a9f3c52-6c3e-4c39-9d2f-1b1f7c1e0a01',
  user: '5b0e7d1c-2f7a-4d6b-8b0e-3c6f4a2d9e02',
  apiKey: '7c1d2e3f-4a5b-4c6d-8e7f-9a0b1c2d3e03',
  project: '1e2d3c4b-5a69-4788-97a6-b5c4d3e2f104',
  section: '2f3e4d5c-6b7a-4899-a8b7-c6d5e4f3a205',
  task: '3a4f5e6d-7c8b-49aa-b9c8-d7e6f5a4b306',
  status: '4b5a6f7e-8d9c-4abb-8ad9-e8f7a6b5c407',
  comment: '5c6b7a8f-9ead-4bcc-9bea-f9a8b7c6d508',
} as const;

export const validApiKey = 'tws_test_0123456789abcdefghijklmnopqrstuvwxyzAB';

/** Fakes a valid API key and a membership of `ids.user` in `ids.workspace`. */
export function fakeCredentials(fake: FakeTasks): void {
  fake.handlers.set('AuthenticateApiKey', (request) => {
    if (request.key !== validApiKey) throw new RpcFailure(grpc.status.UNAUTHENTICATED, 'invalid API key');
    return { workspaceId: ids.workspace, apiKeyId: ids.apiKey, apiKeyName: 'CI key', userId: ids.user };
  });
  fake.handlers.set('GetMembership', (request) => {
    if (request.workspaceId !== ids.workspace || request.userId !== ids.user) throw new RpcFailure(grpc.status.NOT_FOUND, 'member not found');
    return { member: { userId: ids.user, name: 'Ada', email: 'ada@example.com', role: 'ROLE_OWNER' } };
  });
}

export interface CallOptions {
  apiKey?: string;
  bearer?: string;
  workspaceId?: string;
  body?: unknown;
  rawBody?: string;
  headers?: Record<string, string>;
}

export interface CallResult {
  status: number;
  headers: Record<string, string | string[] | number | undefined>;
  text: string;
  /** Parsed JSON body (undefined when empty). */
  json: unknown;
}

/** One request through fastify's inject, with the API's credential headers. */
export async function call(app: App, method: string, url: string, options: CallOptions = {}): Promise<CallResult> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.apiKey !== undefined) headers['x-api-key'] = options.apiKey;
  if (options.bearer !== undefined) headers.authorization = `Bearer ${options.bearer}`;
  if (options.workspaceId !== undefined) headers['x-workspace-id'] = options.workspaceId;
  let payload: string | undefined;
  if (options.rawBody !== undefined) payload = options.rawBody;
  else if (options.body !== undefined) {
    payload = JSON.stringify(options.body);
    headers['content-type'] ??= 'application/json';
  }
  const response = await app.inject({
    method: method as 'GET',
    url,
    headers,
    ...(payload !== undefined ? { payload } : {}),
  });
  return {
    status: response.statusCode,
    headers: response.headers,
    text: response.body,
    json: response.body.length > 0 ? (JSON.parse(response.body) as unknown) : undefined,
  };
}
