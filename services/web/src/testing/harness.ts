import { generateKeyPairSync } from 'node:crypto';
import * as grpc from '@grpc/grpc-js';
import type { FastifyInstance } from 'fastify';
import pg from 'pg';
import { callUnary, createLogger, createMetricsRegistry } from '@tws/common';
import { loadTasksProto } from '@tws/proto-types';
import type { Registry } from 'prom-client';
import { startSession } from '../api/auth.js';
import { buildApp } from '../app.js';
import { loadConfig, type WebConfig } from '../config.js';
import { UserFacingError } from '../domain/errors.js';
import { closedPort } from './ports.js';

export const appUrl = 'http://127.0.0.1:8090';

/** An ES256 signing key for the authorization server (OAUTH_SIGNING_KEYS), one per test process. */
export const testSigningKeys = JSON.stringify({ keys: [{ ...generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ format: 'jwk' }), kid: 'test' }] });

/** What the harness needs of the test stack: the caller passes `inject('stack')`. */
export interface TestStack {
  databaseUrl: string;
  tasksGrpcTarget: string;
  /** The API's public base URL (the task page's attachment links). */
  gatewayUrl?: string;
  /** The stack's services (the attachments service's gRPC port). */
  services?: Array<{ name: string; grpcPort: number }>;
}


export interface WebHarness {
  app: FastifyInstance;
  config: WebConfig;
  registry: Registry;
  /** The test's own connection to the `web` schema (to age sessions). */
  db: pg.Pool;
  close(): Promise<void>;
}

/**
 * The web service built in-process against the test stack's Postgres and tasks service, with an
 * OpenID provider that cannot be reached (the sign-in through a real provider is the browser test).
 * One route is added for the tests: `GET /test/sign-in?email=&verified=` runs what the callback
 * runs after the provider (SignIn.complete, then startSession), so sessions are real.
 */
function attachmentsTarget(stack: TestStack): string {
  const attachments = stack.services?.find((service) => service.name === 'attachments' && service.grpcPort > 0);
  return attachments ? `127.0.0.1:${attachments.grpcPort}` : '127.0.0.1:50052';
}

export async function startWeb(stack: TestStack, env: NodeJS.ProcessEnv = {}): Promise<WebHarness> {
  const config = loadConfig({
    APP_URL: appUrl,
    OIDC_ISSUER_URL: `http://127.0.0.1:${await closedPort()}`,
    OIDC_CLIENT_ID: 'tws-web',
    OIDC_CLIENT_SECRET: 'test-secret',
    SESSION_SECRET: 'test-session-secret-of-at-least-32-bytes',
    DATABASE_URL: stack.databaseUrl,
    TASKS_GRPC_TARGET: stack.tasksGrpcTarget,
    ATTACHMENTS_GRPC_TARGET: attachmentsTarget(stack),
    API_PUBLIC_BASE_URL: stack.gatewayUrl ?? 'http://127.0.0.1:8080',
    SESSION_SWEEP_INTERVAL_MS: '0',
    OAUTH_SIGNING_KEYS: testSigningKeys,
    LOG_LEVEL: 'silent',
    ...env,
  });
  const registry = createMetricsRegistry('web');
  const logger = createLogger('web');
  logger.level = 'silent';
  const app = await buildApp({ config, logger, registry });
  app.get<{ Querystring: { email: string; verified?: string } }>('/test/sign-in', async (request, reply) => {
    const { token } = await app.signIn.complete({ subject: 'test', email: request.query.email, emailVerified: request.query.verified !== 'false' });
    return startSession(app, request, reply, token, '/workspaces');
  });
  await app.ready();
  const db = new pg.Pool({ connectionString: stack.databaseUrl, max: 2, options: '-c search_path=web' });
  return {
    app,
    config,
    registry,
    db,
    async close() {
      await app.close();
      await db.end();
    },
  };
}

export { UserFacingError };

/** A signed-in person's cookie header and CSRF token. */
export interface SignedIn {
  cookie: string;
  token: string;
  csrf: string;
}

export async function signIn(h: WebHarness, email: string): Promise<SignedIn> {
  const response = await h.app.inject({ url: `/test/sign-in?email=${encodeURIComponent(email)}` });
  const session = response.cookies.find((cookie) => cookie.name.endsWith('tws_session'));
  if (response.statusCode !== 303 || !session) throw new Error(`sign-in of ${email} failed: ${response.statusCode} ${response.body}`);
  const page = await h.app.inject({ url: '/workspaces', headers: { cookie: `${session.name}=${session.value}` } });
  const csrf = /name="_csrf" value="([^"]+)"/.exec(page.body)?.[1];
  if (!csrf) throw new Error(`no CSRF token on /workspaces: ${page.statusCode}`);
  return { cookie: `${session.name}=${session.value}`, token: session.value, csrf };
}

/**
 * Requests to the app as a signed-in person: a page (GET with their cookie) and a form post (their
 * cookie, CSRF token and an Origin, the app's unless given; a field given a list is repeated).
 * `harness` is read at each request (test files start the app in `beforeAll`).
 */
export function asPeople(harness: () => WebHarness) {
  return {
    get: (url: string, person: SignedIn) => harness().app.inject({ url, headers: { cookie: person.cookie } }),
    post: (url: string, person: SignedIn, fields: Record<string, string | string[]>, origin = appUrl) => {
      const body = new URLSearchParams({ _csrf: person.csrf });
      for (const [name, value] of Object.entries(fields)) for (const one of [value].flat()) body.append(name, one);
      return harness().app.inject({ method: 'POST', url, headers: { cookie: person.cookie, origin, 'content-type': 'application/x-www-form-urlencoded' }, payload: body.toString() });
    },
  };
}

/** The operators' AdminService of the test stack's tasks service. */
export function adminClient(stack: TestStack) {
  const client = new (loadTasksProto().tasks.v1.AdminService)(stack.tasksGrpcTarget, grpc.credentials.createInsecure());
  return {
    async createWorkspace(name: string, ownerEmail: string) {
      const created = await callUnary(client, client.CreateWorkspace, { name, plan: 'PLAN_FREE', ownerName: 'Owner', ownerEmail });
      return created.workspace!;
    },
    async addMember(workspaceId: string, email: string, role: 'ROLE_OWNER' | 'ROLE_MEMBER' | 'ROLE_GUEST') {
      await callUnary(client, client.AddMember, { workspaceId, email, name: 'Member', role });
    },
    close: () => client.close(),
  };
}

let counter = 0;
/** An email no other test uses. */
export const uniqueEmail = (label: string): string => `${label}-${process.pid}-${Date.now()}-${++counter}@example.com`;
