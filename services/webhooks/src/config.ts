import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { auditEnv, backendEnv, checkKafkaSasl, env, kafkaConnectionEnv, parseConfig } from '@tws/common';
import { parseCidrList } from './clients/address-guard.js';
import { parseRetryDelays } from './domain/retry/schedule.js';

/** A 32-byte AES-256 key given as base64 (standard or url-safe). */
const encryptionKey = () =>
  z
    .string({ error: (issue) => (issue.input === undefined ? 'is required' : 'must be a string') })
    .transform((value, context) => {
      const key = Buffer.from(value.trim(), 'base64');
      if (key.length !== 32) {
        context.addIssue({ code: 'custom', message: 'must be 32 random bytes, base64 encoded (e.g. `openssl rand -base64 32`)' });
        return z.NEVER;
      }
      return key;
    });

/** `host:port` (or `[v6]:port`, or a bare address for port 53) DNS servers, comma-separated. */
const dnsServers = () =>
  env
    .list()
    .default([])
    .pipe(
      z.array(
        z
          .string()
          .regex(/^(\[[0-9a-fA-F:.]+\]|[0-9.]+|[0-9a-fA-F:]+)(:\d{1,5})?$/, 'must be an IP address with an optional :port'),
      ),
    );

const cidrs = () =>
  z
    .string()
    .default('')
    .transform((value, context) => {
      try {
        return parseCidrList(value);
      } catch (error) {
        context.addIssue({ code: 'custom', message: (error as Error).message });
        return z.NEVER;
      }
    });

const retryDelays = () =>
  z
    .string()
    .default('5m,30m,2h,8h')
    .transform((value, context) => {
      try {
        return parseRetryDelays(value);
      } catch (error) {
        context.addIssue({ code: 'custom', message: (error as Error).message });
        return z.NEVER;
      }
    });

const optionalFile = () =>
  z
    .string()
    .optional()
    .transform((value, context) => {
      if (value === undefined || value.trim() === '') return undefined;
      try {
        return readFileSync(value, 'utf8');
      } catch (error) {
        context.addIssue({ code: 'custom', message: `cannot read ${value}: ${(error as Error).message}` });
        return z.NEVER;
      }
    });

/** The only place the webhooks service reads its environment. */
export function loadConfig(source: NodeJS.ProcessEnv = process.env) {
  const config = parseConfig(
    {
      ...backendEnv({ grpcPort: 50053, opsPort: 9103 }),
      KAFKA_CLIENT_ID: env.text('webhooks'),
      /** Encrypts endpoint secrets at rest (AES-256-GCM). */
      WEBHOOK_SECRET_ENCRYPTION_KEY: encryptionKey(),
      /** Delays before attempts 2..5, e.g. `5m,30m,2h,8h` (the contract's defaults). */
      WEBHOOK_RETRY_DELAYS: retryDelays(),
      /** CIDRs exempt from the SSRF guard (development and tests only); empty by default. */
      WEBHOOK_ALLOWED_CIDRS: cidrs(),
      /** DNS servers used to resolve endpoint hosts; default: the system's (resolv.conf). */
      WEBHOOK_DNS_SERVERS: dnsServers(),
      /** Longest time a DNS answer is reused (the record's TTL is honoured when shorter). */
      WEBHOOK_DNS_CACHE_MAX_TTL_SECONDS: z.coerce.number().int().min(0).max(3600).default(30),
      /** A PEM bundle trusted in addition to the system CAs when calling endpoints (tests). */
      WEBHOOK_EXTRA_CA_FILE: optionalFile(),
      /** Total time an attempt may take (connect, TLS, request, response headers and body). */
      WEBHOOK_TIMEOUT_MS: z.coerce.number().int().min(100).max(60_000).default(10_000),
      /** Largest part of a response body read (the rest is discarded and the connection dropped). */
      WEBHOOK_RESPONSE_BODY_LIMIT_BYTES: env.count(64 * 1024),
      /** Attempts running at once across all endpoints (one replica). */
      WEBHOOK_DELIVERY_CONCURRENCY: env.count(256),
      /** Attempts running at once for one workspace (its share of WEBHOOK_DELIVERY_CONCURRENCY). */
      WEBHOOK_WORKSPACE_CONCURRENCY: env.count(128),
      /** Attempts running at once to one endpoint; also its keep-alive pool size. */
      WEBHOOK_ENDPOINT_CONCURRENCY: env.count(32),
      /** Most deliveries one endpoint holds in a replica (in flight + queued); further ones are parked in Postgres. */
      WEBHOOK_ENDPOINT_QUEUE_LIMIT: env.count(500),
      /** Longest expected wait in an endpoint's queue, at its pace, before its further deliveries are parked. */
      WEBHOOK_ENDPOINT_MAX_QUEUE_WAIT_MS: z.coerce.number().int().min(100).max(600_000).default(2_000),
      /**
       * Deliveries accepted from Kafka but not settled yet before fetching pauses (backpressure). Each
       * holds its payload and promises: this bounds the heap; a few times the concurrency keeps every slot busy.
       */
      WEBHOOK_MAX_PENDING_DELIVERIES: env.count(2_000),
      /**
       * Events of a workspace with more live endpoints than this fan out in batches of this many
       * deliveries (one small transaction each, by endpoint id, with a durable cursor) instead of in one statement.
       */
      WEBHOOK_FANOUT_BATCH_SIZE: z.coerce.number().int().min(10).max(5_000).default(500),
      /** Deliveries of batched fan-outs in flight per replica before the next batch waits (bounds the heap). */
      WEBHOOK_FANOUT_MAX_IN_FLIGHT: z.coerce.number().int().min(10).max(50_000).default(1_000),
      /** Finished deliveries (and their attempts) are kept this many days in the delivery log. */
      WEBHOOK_LOG_RETENTION_DAYS: z.coerce.number().int().min(1).max(3650).default(30),
      /** AUDIT_RETENTION_DAYS (default 90) and AUDIT_SWEEP_INTERVAL_MS of the audit trail. */
      ...auditEnv,
      /**
       * An endpoint whose every attempt failed for this long is disabled (no new deliveries; its pending
       * ones are cancelled) until re-enabled with PATCH. 0 = never. Default 3 days.
       */
      WEBHOOK_AUTO_DISABLE_AFTER_SECONDS: z.coerce.number().int().min(0).max(90 * 86_400).default(259_200),
      /** Kafka partitions of the retry, redelivery and dead-letter topics (set by migrate.js). */
      KAFKA_TOPIC_PARTITIONS: env.count(6),
      ...kafkaConnectionEnv,
    },
    source,
  );
  checkKafkaSasl(config);
  return config;
}

export type WebhooksConfig = ReturnType<typeof loadConfig>;
