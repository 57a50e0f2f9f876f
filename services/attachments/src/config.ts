import { auditEnv, backendEnv, ConfigError, env, parseConfig } from '@tws/common';
import { z } from 'zod';

/** The only place the attachments service reads its environment. */
export function loadConfig(source: NodeJS.ProcessEnv = process.env) {
  const config = parseConfig(
    {
      ...backendEnv({ grpcPort: 50052, opsPort: 9102 }),
      S3_ENDPOINT: env.url(),
      S3_PUBLIC_ENDPOINT: env.url(),
      S3_REGION: env.text('us-east-1'),
      /** Static keys; both unset → the AWS SDK's default credential chain (IRSA, instance role, AWS_* env …). */
      S3_ACCESS_KEY: env.optionalText(),
      S3_SECRET_KEY: env.optionalText(),
      S3_BUCKET: env.text('task-attachments'),
      TASKS_GRPC_TARGET: env.grpcTarget('127.0.0.1:50051'),
      /** Deadline of each call to the tasks service. */
      GRPC_DEADLINE_MS: env.durationMs(10_000),
      /** Lifetime of the presigned GET a permanent download URL redirects to (SigV4 allows 1 s … 7 days). */
      DOWNLOAD_URL_TTL_SECONDS: z.coerce.number().int().min(1).max(604_800).default(300),
      /** How often the sweeper looks for abandoned uploads and attachments of deleted tasks; 0 turns it off. */
      SWEEP_INTERVAL_MS: env.durationMs(300_000),
      /** Uploads, and tasks checked for existence, per sweep. */
      SWEEP_BATCH_SIZE: env.count(200),
      /** AUDIT_RETENTION_DAYS (default 90) and AUDIT_SWEEP_INTERVAL_MS of the audit trail. */
      ...auditEnv,
      /**
       * How long after its upload URL expired an unregistered upload is removed; covers a PUT that
       * started just before expiry and clock skew between this service and the object store.
       */
      UPLOAD_GRACE_MS: env.durationMs(3_600_000),
    },
    source,
  );
  if (Boolean(config.S3_ACCESS_KEY) !== Boolean(config.S3_SECRET_KEY)) {
    const missing = config.S3_ACCESS_KEY ? 'S3_SECRET_KEY' : 'S3_ACCESS_KEY';
    throw new ConfigError(`Invalid configuration: ${missing}: is required when the other S3 key is set (or leave both unset for the default credential chain)`);
  }
  return config;
}

export type AttachmentsConfig = ReturnType<typeof loadConfig>;
