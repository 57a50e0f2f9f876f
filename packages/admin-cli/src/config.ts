import { env, parseConfig } from '@tws/common';

/** Where the admin CLI finds the tasks service, and what `token issue` signs with. */
export interface CliConfig {
  tasksGrpcTarget: string;
  /** `token issue` only: the Ed25519 private key (PKCS#8 PEM) and the claims the gateway expects. */
  token: { privateKeyFile?: string; issuer?: string; audience?: string };
}

/** The gRPC port of a tasks process on its own host (`GRPC_PORT` default): right inside a tasks pod. */
export const defaultTasksGrpcTarget = '127.0.0.1:50051';

/**
 * The CLI's settings, from the environment only (an unset or blank variable is not configured).
 * The local stack's launcher (`npm run admin`, packages/devstack) sets them for a developer.
 */
export function loadCliConfig(source: NodeJS.ProcessEnv = process.env): CliConfig {
  const config = parseConfig(
    {
      TASKS_GRPC_TARGET: env.optionalText(),
      DEV_JWT_PRIVATE_KEY_FILE: env.optionalText(),
      DEV_JWT_ISSUER: env.optionalText(),
      DEV_JWT_AUDIENCE: env.optionalText(),
    },
    source,
  );
  return {
    tasksGrpcTarget: config.TASKS_GRPC_TARGET ?? defaultTasksGrpcTarget,
    token: { privateKeyFile: config.DEV_JWT_PRIVATE_KEY_FILE, issuer: config.DEV_JWT_ISSUER, audience: config.DEV_JWT_AUDIENCE },
  };
}
