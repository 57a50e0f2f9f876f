import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { cacheDir } from './paths.js';
import { devSecretsEnv } from './dev-secrets.js';
import { devJwtGatewayEnv, ensureDevJwtKeys, type DevJwtKeys } from './dev-jwt.js';
import { startIdentityProvider, type RunningIdentityProvider } from './identity-provider.js';
import { startInfrastructure, type Infrastructure } from './infra/index.js';
import { reservePort, type PortReservation } from './processes.js';
import { infrastructureEnv, migrateAll, startServices, type RunningServices } from './services.js';
import type { RestartPolicy } from './supervisor.js';

export interface Stack {
  infra: Infrastructure;
  /** The local OpenID Connect provider: issuer, the app's client (id, secret) and the dev users. */
  idp: RunningIdentityProvider;
  devJwt: DevJwtKeys;
  services: RunningServices;
  logDir: string;
  stop(): Promise<void>;
}

export function newLogDir(label: string): string {
  const dir = path.join(cacheDir, 'logs', `${label}-${new Date().toISOString().replace(/[:.]/g, '-')}`);
  mkdirSync(dir, { recursive: true });
  return dir;
}

/**
 * Infrastructure, the identity provider, migrations, the four services and the people-facing app
 * signing in through that provider: what `npm start` and `npm test` both run.
 */
export async function startStack(options: {
  label: string;
  extraEnv?: NodeJS.ProcessEnv;
  replicas?: number;
  gatewayPort?: number;
  /** The app's (services/web) port; default a free one. */
  webPort?: number;
  /** Restart crashed services (`npm start`). */
  restart?: RestartPolicy;
  /** KRaft nodes of the Kafka cluster started for the stack (default 1). */
  kafkaNodes?: number;
  /** The identity provider's client: its redirect URIs (exact matches; default none) and a fixed port. */
  idp?: { redirectUris?: string[]; postLogoutRedirectUris?: string[]; port?: number };
}): Promise<Stack> {
  const logDir = newLogDir(options.label);
  const devJwt = ensureDevJwtKeys();
  // The app (services/web) signs in through the provider: its redirect URI must be registered
  // before the provider starts, so its port is chosen first, and held (listening) until the app
  // starts: a stack started beside this one cannot take it meanwhile.
  const webPort: number | PortReservation = options.webPort ?? (await reservePort());
  const appUrl = `http://127.0.0.1:${typeof webPort === 'number' ? webPort : webPort.port}`;
  const idpOptions = {
    ...options.idp,
    redirectUris: [`${appUrl}/auth/callback`, ...(options.idp?.redirectUris ?? [])],
    postLogoutRedirectUris: [`${appUrl}/`, ...(options.idp?.postLogoutRedirectUris ?? [])],
  };
  // The provider needs nothing of the rest: it starts (in well under a second) while Kafka does.
  const [infraResult, idpResult] = await Promise.allSettled([
    startInfrastructure(logDir, process.env, options.kafkaNodes ? { kafkaNodes: options.kafkaNodes } : {}),
    startIdentityProvider({ logDir, ...idpOptions, ...(options.restart ? { restart: options.restart } : {}) }),
  ]);
  if (infraResult.status === 'rejected' || idpResult.status === 'rejected') {
    if (typeof webPort === 'object') await webPort.release();
    await Promise.all([
      infraResult.status === 'fulfilled' ? infraResult.value.stop() : undefined,
      idpResult.status === 'fulfilled' ? idpResult.value.stop() : undefined,
    ]);
    throw infraResult.status === 'rejected' ? infraResult.reason : (idpResult as PromiseRejectedResult).reason;
  }
  const infra = infraResult.value;
  const idp = idpResult.value;
  try {
    const oidcEnv = {
      OIDC_ISSUER_URL: idp.issuer,
      OIDC_CLIENT_ID: idp.client.clientId,
      OIDC_CLIENT_SECRET: idp.client.clientSecret,
      OIDC_CLIENT_AUTH_METHOD: idp.client.tokenEndpointAuthMethod,
    };
    const serviceEnv = { ...devJwtGatewayEnv(devJwt), ...devSecretsEnv(), ...oidcEnv, ...options.extraEnv };
    await migrateAll({ ...infrastructureEnv(infra), ...serviceEnv });
    const services = await startServices({
      infra,
      logDir,
      extraEnv: serviceEnv,
      ...(options.replicas ? { replicas: options.replicas } : {}),
      ...(options.gatewayPort !== undefined ? { gatewayPort: options.gatewayPort } : {}),
      webPort,
      ...(options.restart ? { restart: options.restart } : {}),
    });
    return {
      infra,
      idp,
      devJwt,
      services,
      logDir,
      async stop() {
        await services.stop();
        await Promise.all([infra.stop(), idp.stop()]);
      },
    };
  } catch (error) {
    if (typeof webPort === 'object') await webPort.release();
    await Promise.all([infra.stop(), idp.stop()]);
    throw error;
  }
}
