import { generateKeyPair, randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import type { IdpConfig } from './idp/config.js';
import { repoRoot } from './paths.js';
import { progress } from './progress.js';
import { freePort, startProcess, waitUntil, type ManagedProcess } from './processes.js';
import { serviceMemoryEnv } from './services.js';
import { supervise, type RestartPolicy } from './supervisor.js';

export type DevUserRole = 'owner' | 'member' | 'guest';

/** The people of the demo workspace: `npm start` adds them as its members, the provider signs them in. */
export const devUsers: ReadonlyArray<{ email: string; name: string; role: DevUserRole }> = [
  { email: 'owner@example.com', name: 'Olivia Owner', role: 'owner' },
  { email: 'member@example.com', name: 'Milo Member', role: 'member' },
  { email: 'guest@example.com', name: 'Gwen Guest', role: 'guest' },
];

/** The app's client at the provider (the web app is its relying party). */
export const devClientId = 'task-workspace-web';

/** What a relying party (and a test) needs to know about the provider. */
export interface IdentityProviderFacts {
  /** Discovery is at `${issuer}/.well-known/openid-configuration`. */
  issuer: string;
  client: {
    clientId: string;
    /** Generated for this run. */
    clientSecret: string;
    redirectUris: string[];
    tokenEndpointAuthMethod: 'client_secret_post' | 'client_secret_basic';
  };
  /** Dev-only users with passwords generated for this run; `role` is their role in the demo workspace. */
  users: Array<{ email: string; name: string; password: string; role: DevUserRole }>;
}

export interface RunningIdentityProvider extends IdentityProviderFacts {
  /** The process running now (a new one after a restart, `npm start`). */
  readonly process: ManagedProcess;
  logFile: string;
  stop(): Promise<void>;
}

export interface IdentityProviderOptions {
  logDir: string;
  /** The app's `<app_url>/auth/callback` and any a test listens on; exact matches only. Default: none. */
  redirectUris?: string[];
  postLogoutRedirectUris?: string[];
  /** Default: a free loopback port. */
  port?: number;
  tokenEndpointAuthMethod?: IdentityProviderFacts['client']['tokenEndpointAuthMethod'];
  /** Restart the provider if it exits unexpectedly (`npm start`); it keeps its keys and secrets. */
  restart?: RestartPolicy;
}

const entryPoint = path.join(repoRoot, 'packages', 'devstack', 'dist', 'idp', 'server.js');

/** A dev-only password: 16 URL-safe characters, new each run. */
const generatePassword = (): string => randomBytes(12).toString('base64url');

async function signingKey(): Promise<Record<string, unknown>> {
  const { privateKey } = await promisify(generateKeyPair)('rsa', { modulusLength: 2048 });
  return { ...privateKey.export({ format: 'jwk' }), kid: randomUUID(), use: 'sig', alg: 'RS256' };
}

/**
 * Starts the local OpenID Connect provider (oidc-provider, dist/idp/server.js) as its own process
 * on loopback, with the demo users, one confidential client and keys and secrets generated for
 * this run (written to a 0600 file in a private temporary directory, removed at stop).
 */
export async function startIdentityProvider(options: IdentityProviderOptions): Promise<RunningIdentityProvider> {
  const port = options.port ?? (await freePort());
  const issuer = `http://127.0.0.1:${port}`;
  const users = devUsers.map((user) => ({ ...user, password: generatePassword() }));
  const client: IdentityProviderFacts['client'] = {
    clientId: devClientId,
    clientSecret: randomBytes(32).toString('base64url'),
    redirectUris: [...(options.redirectUris ?? [])],
    tokenEndpointAuthMethod: options.tokenEndpointAuthMethod ?? 'client_secret_post',
  };
  const config: IdpConfig = {
    issuer,
    host: '127.0.0.1',
    port,
    client: { ...client, postLogoutRedirectUris: options.postLogoutRedirectUris ?? [] },
    users: users.map(({ email, name, password }) => ({ email, name, password })),
    cookieKeys: [randomBytes(32).toString('base64url')],
    jwks: { keys: [await signingKey()] },
    sessionTtlSeconds: 8 * 3600,
  };
  const configDir = mkdtempSync(path.join(os.tmpdir(), 'tws-idp-'));
  const configFile = path.join(configDir, 'idp.json');
  writeFileSync(configFile, JSON.stringify(config), { mode: 0o600 });

  progress(`starting the identity provider at ${issuer}`);
  const launch = (): ManagedProcess =>
    startProcess('idp', process.execPath, [entryPoint], {
      logDir: options.logDir,
      env: { ...serviceMemoryEnv, ...process.env, IDP_CONFIG_FILE: configFile, LOG_LEVEL: process.env.LOG_LEVEL ?? 'info' },
    });
  const supervisor = options.restart ? supervise('idp', launch, options.restart) : undefined;
  const first = supervisor?.current ?? launch();
  const stop = async (): Promise<void> => {
    await (supervisor ?? first).stop(5_000);
    rmSync(configDir, { recursive: true, force: true });
  };
  try {
    await waitUntil(
      'identity provider',
      async () => (await fetch(`${issuer}/.well-known/openid-configuration`)).ok,
      { timeoutMs: 20_000, process: first, intervalMs: 100 },
    );
  } catch (error) {
    await stop();
    throw error;
  }
  return {
    issuer,
    client,
    users,
    get process() {
      return supervisor?.current ?? first;
    },
    logFile: first.logFile,
    stop,
  };
}

/** The facts alone (no handles), e.g. for a test's provided context or a JSON file. */
export function identityProviderFacts(idp: IdentityProviderFacts): IdentityProviderFacts {
  return { issuer: idp.issuer, client: { ...idp.client, redirectUris: [...idp.client.redirectUris] }, users: idp.users.map((user) => ({ ...user })) };
}
