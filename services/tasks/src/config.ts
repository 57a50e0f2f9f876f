import { env, parseConfig } from '@tws/common';

/** The only place the tasks service reads its environment. */
export function loadConfig(source: NodeJS.ProcessEnv = process.env) {
  return parseConfig(
    {
      LOG_LEVEL: env.logLevel(),
      HOST: env.host(),
      GRPC_PORT: env.port(50051),
      OPS_PORT: env.port(9101),
      DATABASE_URL: env.url(),
      DATABASE_POOL_SIZE: env.count(20),
      KAFKA_BROKERS: env.list(),
      KAFKA_CLIENT_ID: env.text('tasks'),
    },
    source,
  );
}

export type TasksConfig = ReturnType<typeof loadConfig>;
