import { env, parseConfig } from '@tws/common';

/** The only place the gateway reads its environment. */
export function loadConfig(source: NodeJS.ProcessEnv = process.env) {
  return parseConfig(
    {
      LOG_LEVEL: env.logLevel(),
      HOST: env.host(),
      PORT: env.port(8080),
      BODY_LIMIT_BYTES: env.count(1024 * 1024),
      TRUST_PROXY: env.bool(false),
      TASKS_GRPC_TARGET: env.grpcTarget('127.0.0.1:50051'),
      ATTACHMENTS_GRPC_TARGET: env.grpcTarget('127.0.0.1:50052'),
      WEBHOOKS_GRPC_TARGET: env.grpcTarget('127.0.0.1:50053'),
      GRPC_DEADLINE_MS: env.durationMs(10_000),
    },
    source,
  );
}

export type GatewayConfig = ReturnType<typeof loadConfig>;
