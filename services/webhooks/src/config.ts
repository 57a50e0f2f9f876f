import { env, parseConfig } from '@tws/common';

/** The only place the webhooks service reads its environment. */
export function loadConfig(source: NodeJS.ProcessEnv = process.env) {
  return parseConfig(
    {
      LOG_LEVEL: env.logLevel(),
      HOST: env.host(),
      GRPC_PORT: env.port(50053),
      OPS_PORT: env.port(9103),
      DATABASE_URL: env.url(),
      DATABASE_POOL_SIZE: env.count(10),
      KAFKA_BROKERS: env.list(),
      KAFKA_CLIENT_ID: env.text('webhooks'),
    },
    source,
  );
}

export type WebhooksConfig = ReturnType<typeof loadConfig>;
