import { progress } from '../progress.js';
import { startKafka, type RunningKafka } from './kafka.js';
import { startMinio, type RunningMinio } from './minio.js';
import { startPostgres, type RunningPostgres } from './postgres.js';

export { startPostgres, type RunningPostgres };

export interface S3Settings {
  endpoint: string;
  accessKey: string;
  secretKey: string;
}

export interface Infrastructure {
  databaseUrl: string;
  kafkaBrokers: string[];
  /** Replication of the topics the migration steps create: what the cluster started here fits, or from the environment. */
  kafkaTopicReplication: { replicationFactor: number; minInsyncReplicas: number };
  s3: S3Settings;
  /** Handles on servers this launcher started (absent when given by the environment). */
  postgres?: RunningPostgres;
  kafka?: RunningKafka;
  minio?: RunningMinio;
  stop(): Promise<void>;
}

/**
 * Starts PostgreSQL, Kafka (`kafkaNodes` KRaft nodes, default 1) and MinIO on loopback, in
 * parallel, or uses the ones named by DATABASE_URL, KAFKA_BROKERS and S3_ENDPOINT (+ S3_ACCESS_KEY,
 * S3_SECRET_KEY) and starts nothing for those. With KAFKA_BROKERS, topics are replicated as
 * KAFKA_TOPIC_REPLICATION_FACTOR and KAFKA_TOPIC_MIN_INSYNC_REPLICAS say (default 1 and 1).
 */
export async function startInfrastructure(
  logDir: string,
  env: NodeJS.ProcessEnv = process.env,
  options: { kafkaNodes?: number } = {},
): Promise<Infrastructure> {
  const external = {
    databaseUrl: env.DATABASE_URL,
    kafkaBrokers: env.KAFKA_BROKERS?.split(',').map((broker) => broker.trim()).filter(Boolean),
    s3: env.S3_ENDPOINT
      ? { endpoint: env.S3_ENDPOINT, accessKey: env.S3_ACCESS_KEY ?? '', secretKey: env.S3_SECRET_KEY ?? '' }
      : undefined,
  };
  for (const [name, value] of Object.entries(external)) if (value) progress(`using ${name} from the environment`);
  const started = await Promise.allSettled([
    external.databaseUrl ? Promise.resolve(undefined) : startPostgres(logDir),
    external.kafkaBrokers?.length ? Promise.resolve(undefined) : startKafka(logDir, { nodes: options.kafkaNodes ?? 1 }),
    external.s3 ? Promise.resolve(undefined) : startMinio(logDir),
  ]);
  const [postgresResult, kafkaResult, minioResult] = started;
  const running = started.flatMap((result) => (result.status === 'fulfilled' && result.value ? [result.value] : []));
  const failure = started.find((result): result is PromiseRejectedResult => result.status === 'rejected');
  if (failure) {
    await Promise.all(running.map((server) => server.stop()));
    throw failure.reason;
  }
  const postgres = postgresResult.status === 'fulfilled' ? postgresResult.value : undefined;
  const kafka = kafkaResult.status === 'fulfilled' ? kafkaResult.value : undefined;
  const minio = minioResult.status === 'fulfilled' ? minioResult.value : undefined;
  return {
    databaseUrl: external.databaseUrl ?? postgres!.url,
    kafkaBrokers: external.kafkaBrokers?.length ? external.kafkaBrokers : kafka!.brokers,
    kafkaTopicReplication: kafka?.topicReplication ?? {
      replicationFactor: Number(env.KAFKA_TOPIC_REPLICATION_FACTOR ?? 1),
      minInsyncReplicas: Number(env.KAFKA_TOPIC_MIN_INSYNC_REPLICAS ?? 1),
    },
    s3: external.s3 ?? { endpoint: minio!.endpoint, accessKey: minio!.accessKey, secretKey: minio!.secretKey },
    ...(postgres ? { postgres } : {}),
    ...(kafka ? { kafka } : {}),
    ...(minio ? { minio } : {}),
    async stop() {
      await Promise.all(running.map((server) => server.stop()));
    },
  };
}
