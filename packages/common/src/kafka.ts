import { readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import kafkajs, { Kafka, logLevel, type Admin, type KafkaConfig, type LogEntry, type SASLOptions } from 'kafkajs';
import type { Logger } from 'pino';
import { Gauge, type Registry } from 'prom-client';
import { withTimeout } from './readiness.js';
import { installKafkaRecordEncoder } from './kafka-record.js';
import { installAdaptiveFetch } from './kafka-adaptive-fetch.js';
import { installKafkaRequestQueueFix } from './kafka-request-queue.js';

export type { Kafka } from 'kafkajs';

// An enum Node's ESM loader does not find among kafkajs' CommonJS named exports.
const { ConfigResourceTypes } = kafkajs;

const pinoLevelOf: Record<number, 'error' | 'warn' | 'info' | 'debug'> = {
  [logLevel.ERROR]: 'error',
  [logLevel.WARN]: 'warn',
  [logLevel.INFO]: 'info',
  [logLevel.DEBUG]: 'debug',
};

/**
 * The one place a service builds its Kafka client, so a kafkajs-compatible client can replace it.
 * kafkajs logs go through the service's JSON logger; its records are encoded by kafka-record.ts,
 * its connections' request queues wait without a 1 ms timer (kafka-request-queue.ts), and groups
 * registered with `adaptFetchWhenIdle` stop batching their fetches while idle (kafka-adaptive-fetch.ts).
 */
export function createKafka(options: { clientId: string; brokers: string[]; logger: Logger } & Partial<KafkaConfig>): Kafka {
  installKafkaRecordEncoder();
  installKafkaRequestQueueFix();
  installAdaptiveFetch();
  const { logger, ...config } = options;
  const kafkaLogger = logger.child({ component: 'kafkajs' });
  return new Kafka({
    ...config,
    logLevel: logLevel.WARN,
    logCreator:
      () =>
      ({ level, log }: LogEntry) => {
        const { message, ...extra } = log;
        kafkaLogger[pinoLevelOf[level] ?? 'info'](extra, message);
      },
    retry: { initialRetryTime: 300, retries: 8, ...config.retry },
  });
}

/**
 * `kafka_reachable`: 1 when the cluster answered a metadata request (within `timeoutMs`) at the
 * last scrape, else 0. Kafka is not a readiness check of any service: consumers and producers
 * reconnect by themselves, and no service's API needs it to answer, so an outage must not take
 * pods out of their Service (that cascades up to the gateway). This gauge is how its state is
 * watched instead. One probe at a time: a scrape during a slow probe waits for that one.
 */
export function kafkaReachableGauge(registry: Registry, admin: Admin, timeoutMs = 2_000): Gauge {
  let probe: Promise<boolean> | undefined;
  const reach = (): Promise<boolean> =>
    (probe ??= (async () => {
      try {
        await admin.connect();
        await admin.describeCluster();
        return true;
      } catch {
        return false;
      } finally {
        probe = undefined;
      }
    })());
  return new Gauge({
    name: 'kafka_reachable',
    help: '1 when this process reached the Kafka cluster (metadata request) at the last scrape, else 0.',
    registers: [registry],
    async collect() {
      const reached = await withTimeout(reach(), timeoutMs, 'timed out').catch(() => false);
      this.set(reached ? 1 : 0);
    },
  });
}

/** A topic a migration step owns. */
export interface TopicSpec {
  topic: string;
  numPartitions: number;
  configEntries?: Array<{ name: string; value: string }>;
}

/**
 * How many copies of every partition are kept, and how many must have a write before it is
 * acknowledged (producers send with acks=-1, "all in-sync replicas"): with 3 and 2, one broker may
 * be lost without losing or refusing an acknowledged event.
 */
export interface TopicDurability {
  replicationFactor: number;
  minInsyncReplicas: number;
}

/** Raised by ensureTopics when the cluster or an existing topic is below the configured durability. */
export class TopicDurabilityError extends Error {
  override readonly name = 'TopicDurabilityError';
}

/**
 * Creates the topics that do not exist yet with the configured replication factor and
 * min.insync.replicas, and checks the ones that exist: a topic with fewer replicas, or a lower
 * effective min.insync.replicas (its own or the broker default), than configured makes this throw,
 * naming each topic and setting. Existing topics are never altered: they may be managed elsewhere
 * (a Strimzi KafkaTopic, the operator's own tooling), and kafkajs only has the non-incremental
 * AlterConfigs, which would reset the topic's other overrides. Idempotent; used by migration jobs.
 */
export async function ensureTopics(kafka: Kafka, topics: TopicSpec[], durability: TopicDurability, brokerGraceMs = 15_000): Promise<void> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    // Brokers learn of created and deleted topics one after another: a broker that has not yet may
    // answer "This server does not host this topic-partition" (retriable) for a topic another
    // broker listed. Inspect again until the answers agree. Brokers also learn of each other one
    // after another: a broker that has just started may list itself alone for a moment, so too
    // few brokers is believed only after `brokerGraceMs` of asking again.
    const brokersDeadline = Date.now() + brokerGraceMs;
    const { missing, problems } = await untilNotRetriable(async () => {
      const existing = new Set(await admin.listTopics());
      const present = topics.filter(({ topic }) => existing.has(topic));
      const absent = topics.filter(({ topic }) => !existing.has(topic));
      const found = present.length > 0 ? await durabilityProblems(admin, present.map(({ topic }) => topic), durability) : [];
      if (absent.length > 0) {
        const { brokers } = await admin.describeCluster();
        if (brokers.length < durability.replicationFactor) {
          if (Date.now() < brokersDeadline) throw new TooFewBrokersYet();
          found.push(
            `cannot create ${absent.map(({ topic }) => topic).join(', ')} with KAFKA_TOPIC_REPLICATION_FACTOR=${durability.replicationFactor}: ` +
              `the cluster has ${brokers.length} broker${brokers.length === 1 ? '' : 's'} online`,
          );
        }
      }
      return { missing: absent, problems: found };
    });
    if (problems.length > 0) throw new TopicDurabilityError(`Kafka topics below the configured durability: ${problems.join('; ')}`);
    if (missing.length > 0) {
      await admin.createTopics({
        // kafkajs' own wait gives up on "This server does not host this topic-partition", which a
        // broker answers until the controller's metadata reaches it (several brokers): wait below.
        waitForLeaders: false,
        topics: missing.map(({ configEntries = [], ...topic }) => ({
          ...topic,
          replicationFactor: durability.replicationFactor,
          configEntries: [...configEntries, { name: 'min.insync.replicas', value: String(durability.minInsyncReplicas) }],
        })),
      });
      await waitForLeaders(admin, missing.map(({ topic }) => topic));
    }
  } finally {
    await admin.disconnect();
  }
}

/** The cluster's answer lists fewer brokers than the replication factor needs: ask again (see ensureTopics). */
class TooFewBrokersYet extends Error {
  readonly retriable = true;
}

const isRetriable = (error: unknown): boolean => (error as { retriable?: unknown }).retriable === true;

/** Runs `work` again (after 250 ms) while it fails with a retriable Kafka error, for at most `timeoutMs`. */
async function untilNotRetriable<T>(work: () => Promise<T>, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await work();
    } catch (error) {
      if (!isRetriable(error) || Date.now() > deadline) throw error;
    }
    await sleep(250);
  }
}

/** Polls until every partition of `topics` has a leader, through retriable errors, for at most `timeoutMs`. */
async function waitForLeaders(admin: Admin, topics: string[], timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      const metadata = await admin.fetchTopicMetadata({ topics });
      if (metadata.topics.every(({ partitions }) => partitions.length > 0 && partitions.every(({ leader }) => leader >= 0))) return;
    } catch (error) {
      if (!isRetriable(error) || Date.now() > deadline) throw error;
    }
    if (Date.now() > deadline) throw new Error(`Kafka topics ${topics.join(', ')} have partitions without a leader after ${timeoutMs} ms`);
    await sleep(250);
  }
}

async function durabilityProblems(admin: Admin, topics: string[], durability: TopicDurability): Promise<string[]> {
  const problems: string[] = [];
  const metadata = await admin.fetchTopicMetadata({ topics });
  for (const { name, partitions } of metadata.topics) {
    const replicas = Math.min(...partitions.map((partition) => partition.replicas.length));
    if (replicas < durability.replicationFactor) {
      problems.push(
        `topic ${name} has replication factor ${replicas}, below KAFKA_TOPIC_REPLICATION_FACTOR=${durability.replicationFactor} ` +
          '(add replicas with kafka-reassign-partitions.sh, or lower the setting)',
      );
    }
  }
  const configs = await admin.describeConfigs({
    includeSynonyms: false,
    resources: topics.map((name) => ({ type: ConfigResourceTypes.TOPIC, name, configNames: ['min.insync.replicas'] })),
  });
  for (const resource of configs.resources) {
    const entry = resource.configEntries.find(({ configName }) => configName === 'min.insync.replicas');
    const value = Number(entry?.configValue ?? Number.NaN);
    if (!(value >= durability.minInsyncReplicas)) {
      problems.push(
        `topic ${resource.resourceName} has min.insync.replicas ${entry?.configValue ?? 'unknown'}, below KAFKA_TOPIC_MIN_INSYNC_REPLICAS=${durability.minInsyncReplicas} ` +
          `(kafka-configs.sh --alter --entity-type topics --entity-name ${resource.resourceName} --add-config min.insync.replicas=${durability.minInsyncReplicas}, or lower the setting)`,
      );
    }
  }
  return problems;
}

/** Kafka connection security as every service's config.ts declares it (KAFKA_SSL, KAFKA_SASL_*). */
export interface KafkaSecuritySettings {
  KAFKA_SSL: boolean;
  KAFKA_SSL_CA_FILE?: string | undefined;
  KAFKA_SASL_MECHANISM?: 'plain' | 'scram-sha-256' | 'scram-sha-512' | undefined;
  KAFKA_SASL_USERNAME?: string | undefined;
  KAFKA_SASL_PASSWORD?: string | undefined;
}

/**
 * kafkajs `ssl`/`sasl` options from the settings: TLS with the system trust store or a CA bundle
 * file, and SASL PLAIN or SCRAM (independent of TLS, as kafkajs allows).
 */
export function kafkaSecurity(settings: KafkaSecuritySettings): Pick<KafkaConfig, 'ssl' | 'sasl'> {
  const options: Pick<KafkaConfig, 'ssl' | 'sasl'> = {};
  if (settings.KAFKA_SSL) {
    options.ssl = settings.KAFKA_SSL_CA_FILE ? { ca: [readFileSync(settings.KAFKA_SSL_CA_FILE, 'utf8')] } : true;
  }
  if (settings.KAFKA_SASL_MECHANISM) {
    const credentials = { username: settings.KAFKA_SASL_USERNAME ?? '', password: settings.KAFKA_SASL_PASSWORD ?? '' };
    options.sasl = { mechanism: settings.KAFKA_SASL_MECHANISM, ...credentials } as SASLOptions;
  }
  return options;
}
