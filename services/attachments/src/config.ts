import { env, parseConfig } from '@tws/common';

/** The only place the attachments service reads its environment. */
export function loadConfig(source: NodeJS.ProcessEnv = process.env) {
  return parseConfig(
    {
      LOG_LEVEL: env.logLevel(),
      HOST: env.host(),
      GRPC_PORT: env.port(50052),
      OPS_PORT: env.port(9102),
      DATABASE_URL: env.url(),
      DATABASE_POOL_SIZE: env.count(10),
      S3_ENDPOINT: env.url(),
      S3_PUBLIC_ENDPOINT: env.url(),
      S3_REGION: env.text('us-east-1'),
      S3_ACCESS_KEY: env.text(),
      S3_SECRET_KEY: env.text(),
      S3_BUCKET: env.text('task-attachments'),
      TASKS_GRPC_TARGET: env.grpcTarget('127.0.0.1:50051'),
    },
    source,
  );
}

export type AttachmentsConfig = ReturnType<typeof loadConfig>;
