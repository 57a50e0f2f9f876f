import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { cacheDir } from './paths.js';
import { devSecretsEnv } from './dev-secrets.js';
import { devJwtGatewayEnv, ensureDevJwtKeys, type DevJwtKeys } from './dev-jwt.js';
import { startInfrastructure, type Infrastructure } from './infra/index.js';
import { infrastructureEnv, migrateAll, startServices, type RunningServices } from './services.js';
import type { RestartPolicy } from './supervisor.js';

export interface Stack {
  infra: Infrastructure;
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

/** Infrastructure, migrations and the four services: what `npm start` and `npm test` both run. */
export async function startStack(options: {
  label: string;
  extraEnv?: NodeJS.ProcessEnv;
  replicas?: number;
  gatewayPort?: number;
  /** Restart crashed services (`npm start`). */
  restart?: RestartPolicy;
  /** KRaft nodes of the Kafka cluster started for the stack (default 1). */
  kafkaNodes?: number;
}): Promise<Stack> {
  const logDir = newLogDir(options.label);
  const devJwt = ensureDevJwtKeys();
  const infra = await startInfrastructure(logDir, process.env, options.kafkaNodes ? { kafkaNodes: options.kafkaNodes } : {});
  try {
    const serviceEnv = { ...devJwtGatewayEnv(devJwt), ...devSecretsEnv(), ...options.extraEnv };
    await migrateAll({ ...infrastructureEnv(infra), ...serviceEnv });
    const services = await startServices({
      infra,
      logDir,
      extraEnv: serviceEnv,
      ...(options.replicas ? { replicas: options.replicas } : {}),
      ...(options.gatewayPort !== undefined ? { gatewayPort: options.gatewayPort } : {}),
      ...(options.restart ? { restart: options.restart } : {}),
    });
    return {
      infra,
      devJwt,
      services,
      logDir,
      async stop() {
        await services.stop();
        await infra.stop();
      },
    };
  } catch (error) {
    await infra.stop();
    throw error;
  }
}
