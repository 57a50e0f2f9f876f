import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import { z } from 'zod';

/**
 * The platform metrics every service shares (README "Metrics"): its database pools, its Kafka
 * produce calls, its object-storage calls and its build. Each family is registered once per
 * registry, whatever the number of pools or clients feeding it.
 */

const latencyBuckets = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/** What the pool gauges read (a `pg.Pool` has all three). */
export interface PoolCounts {
  readonly totalCount: number;
  readonly idleCount: number;
  readonly waitingCount: number;
}

const poolNamePattern = /^[a-z][a-z0-9_-]{0,39}$/;
const poolsByRegistry = new WeakMap<Registry, Map<string, { pool: PoolCounts; max: number }>>();

/**
 * `pg_pool_connections`, `pg_pool_idle_connections`, `pg_pool_waiting_clients` and
 * `pg_pool_max_connections` {pool}: read from the pool at scrape time. `waiting` above 0 means
 * callers queue for a connection (the pool is saturated); see the TaskWorkspaceDatabasePoolSaturated alert.
 */
export function registerPoolMetrics(registry: Registry, name: string, pool: PoolCounts, max: number): void {
  if (!poolNamePattern.test(name)) throw new Error(`invalid pool name ${name}`);
  let pools = poolsByRegistry.get(registry);
  if (!pools) {
    const registered = new Map<string, { pool: PoolCounts; max: number }>();
    pools = registered;
    poolsByRegistry.set(registry, registered);
    const gauge = (metric: string, help: string, read: (entry: { pool: PoolCounts; max: number }) => number): void => {
      new Gauge({
        name: metric,
        help,
        labelNames: ['pool'],
        registers: [registry],
        collect() {
          this.reset();
          for (const [poolName, entry] of registered) this.set({ pool: poolName }, read(entry));
        },
      });
    };
    gauge('pg_pool_connections', 'Connections the Postgres pool holds (idle and in use), by pool.', (entry) => entry.pool.totalCount);
    gauge('pg_pool_idle_connections', 'Connections of the Postgres pool open but not in use, by pool.', (entry) => entry.pool.idleCount);
    gauge('pg_pool_waiting_clients', 'Callers queued for a connection of the Postgres pool (above 0: saturated), by pool.', (entry) => entry.pool.waitingCount);
    gauge('pg_pool_max_connections', 'Most connections the Postgres pool may open (its configured size), by pool.', (entry) => entry.max);
  }
  pools.set(name, { pool, max });
}

/** A label value from a library's error name, bounded: at most `limit` distinct values, then `other`. */
export function boundedLabel(limit = 20): (value: string | undefined) => string {
  const seen = new Set<string>();
  return (value) => {
    if (value === undefined || !/^[A-Za-z][A-Za-z0-9_.-]{0,63}$/.test(value)) return 'other';
    if (seen.has(value)) return value;
    if (seen.size >= limit) return 'other';
    seen.add(value);
    return value;
  };
}

function errorName(error: unknown): string | undefined {
  return error instanceof Error ? error.name : undefined;
}

export interface KafkaProduceMetrics {
  /** Times one produce request (`send`/`sendBatch` until acknowledged or failed) to `topic`. */
  time<T>(topic: string, produce: () => Promise<T>): Promise<T>;
}

/**
 * `kafka_produce_duration_seconds` {topic, outcome=ok|error} and `kafka_produce_errors_total`
 * {topic, error} (the client's error class, e.g. KafkaJSConnectionError, at most 20 distinct).
 */
const kafkaByRegistry = new WeakMap<Registry, KafkaProduceMetrics>();

export function kafkaProduceMetrics(registry: Registry): KafkaProduceMetrics {
  const cached = kafkaByRegistry.get(registry);
  if (cached) return cached;
  const duration = new Histogram({
    name: 'kafka_produce_duration_seconds',
    help: 'Time of one Kafka produce request until the broker acknowledged it (acks=all) or it failed, by topic and outcome.',
    labelNames: ['topic', 'outcome'],
    buckets: latencyBuckets,
    registers: [registry],
  });
  const errors = new Counter({
    name: 'kafka_produce_errors_total',
    help: 'Kafka produce requests that failed, by topic and error class.',
    labelNames: ['topic', 'error'],
    registers: [registry],
  });
  const label = boundedLabel();
  const metrics: KafkaProduceMetrics = {
    async time(topic, produce) {
      const end = duration.startTimer({ topic });
      try {
        const result = await produce();
        end({ outcome: 'ok' });
        return result;
      } catch (error) {
        end({ outcome: 'error' });
        errors.inc({ topic, error: label(errorName(error)) });
        throw error;
      }
    },
  };
  kafkaByRegistry.set(registry, metrics);
  return metrics;
}

export type ObjectStoreOutcome = 'ok' | 'not_found' | 'error';

export interface ObjectStoreMetrics {
  /** Records one finished call: `operation` (e.g. HeadObject), its duration and how it ended. */
  observe(operation: string, seconds: number, outcome: ObjectStoreOutcome, error?: unknown): void;
}

/**
 * `s3_request_duration_seconds` {operation, outcome=ok|not_found|error} (retries included) and
 * `s3_request_errors_total` {operation, error} (the S3 error code, at most 20 distinct). A 404 is
 * an answer (stat of a missing object), not an error.
 */
export function objectStoreMetrics(registry: Registry): ObjectStoreMetrics {
  const duration = new Histogram({
    name: 's3_request_duration_seconds',
    help: 'Time of one object-storage (S3) call including its retries, by operation and outcome (ok, not_found, error).',
    labelNames: ['operation', 'outcome'],
    buckets: latencyBuckets,
    registers: [registry],
  });
  const errors = new Counter({
    name: 's3_request_errors_total',
    help: 'Object-storage (S3) calls that failed (404 excluded), by operation and error code.',
    labelNames: ['operation', 'error'],
    registers: [registry],
  });
  const operationLabel = boundedLabel(30);
  const errorLabel = boundedLabel();
  return {
    observe(operation, seconds, outcome, error) {
      const op = operationLabel(operation);
      duration.observe({ operation: op, outcome }, seconds);
      if (outcome === 'error') errors.inc({ operation: op, error: errorLabel(errorName(error)) });
    },
  };
}

const manifestSchema = z.object({ version: z.string().regex(/^[0-9A-Za-z.+-]{1,64}$/) });
const revisionPattern = /^[0-9A-Za-z._-]{1,64}$/;

/**
 * The version of the package whose entry point is `entry` (the nearest package.json above it, at
 * most four levels up), or `unknown`.
 */
export function packageVersion(entry: string | undefined): string {
  if (!entry) return 'unknown';
  let dir = path.dirname(path.resolve(entry));
  for (let level = 0; level < 4; level++) {
    const manifest = path.join(dir, 'package.json');
    if (existsSync(manifest)) {
      try {
        const parsed = manifestSchema.safeParse(JSON.parse(readFileSync(manifest, 'utf8')));
        return parsed.success ? parsed.data.version : 'unknown';
      } catch {
        return 'unknown';
      }
    }
    dir = path.dirname(dir);
  }
  return 'unknown';
}

/**
 * `task_workspace_build_info` {version, revision} = 1 (plus the registry's `service` label):
 * version from the service's package.json, revision from GIT_REVISION (set by the image build),
 * `unknown` otherwise.
 */
export function registerBuildInfo(registry: Registry, build: { revision?: string | undefined; version?: string }): Gauge<'version' | 'revision'> {
  const gauge = new Gauge({
    name: 'task_workspace_build_info',
    help: 'Always 1; the labels say which build runs: version (package.json) and revision (GIT_REVISION).',
    labelNames: ['version', 'revision'],
    registers: [registry],
  });
  const revision = build.revision !== undefined && revisionPattern.test(build.revision) ? build.revision : 'unknown';
  gauge.set({ version: build.version ?? packageVersion(process.argv[1]), revision }, 1);
  return gauge;
}
