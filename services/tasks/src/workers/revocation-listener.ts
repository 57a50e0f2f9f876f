import type { Logger } from '@tws/common';
import pg from 'pg';
import { parseAck, parseNotice, revocationAcksChannel, revocationsChannel, type RevocationAck, type RevocationNotice } from '../domain/revocations.js';
import { listenForRevocations } from '../store/revocations.js';

/** Where the listener's news go (the hub and the publisher, wired in app.ts). */
export interface RevocationListenerSink {
  up(): void;
  down(reason: string): void;
  /** A round trip on the session succeeded (after every notification committed before it). */
  heartbeat(): void;
  revocation(notice: RevocationNotice): void;
  ack(ack: RevocationAck): void;
}

export interface RevocationListenerOptions {
  databaseUrl: string;
  replicaId: string;
  /** A round trip (`SELECT 1`) on the session this often; each success is a heartbeat to the watchers. */
  heartbeatIntervalMs: number;
  sink: RevocationListenerSink;
  logger: Logger;
  initialBackoffMs?: number;
  maxBackoffMs?: number;
}

/**
 * This replica's one LISTEN session for revocations (every replica runs one; the outbox relay's
 * session listens only on the active replica). It reconnects with backoff, and proves itself alive
 * every `heartbeatIntervalMs` with a round trip: a session that fails or does not answer within two
 * intervals is dropped, reported `down` (the hub cuts its watchers off) and replaced.
 */
export class RevocationListener {
  private stopping = false;
  private loop: Promise<void> | undefined;
  private client: pg.Client | undefined;
  private wake: (() => void) | undefined;

  constructor(private readonly options: RevocationListenerOptions) {}

  start(): void {
    this.loop ??= this.run();
  }

  async stop(): Promise<void> {
    this.stopping = true;
    this.wake?.();
    await this.loop;
  }

  private async run(): Promise<void> {
    const { logger, sink } = this.options;
    const initial = this.options.initialBackoffMs ?? 200;
    const max = this.options.maxBackoffMs ?? 5_000;
    let backoff = initial;
    let failures = 0;
    while (!this.stopping) {
      let up = false;
      try {
        const client = await this.connect();
        await listenForRevocations(client, this.options.replicaId);
        up = true;
        sink.up();
        if (failures > 0) logger.info({ failures }, 'revocation session listening again');
        else logger.info('revocation session listening');
        failures = 0;
        backoff = initial;
        while (!this.stopping) {
          await this.sleep(this.options.heartbeatIntervalMs);
          if (this.stopping) break;
          await this.ping(client);
          sink.heartbeat();
        }
      } catch (error) {
        failures += 1;
        if (up) sink.down(error instanceof Error ? error.message : String(error));
        if (up || failures % 10 === 1) logger.warn({ err: error, failures, backoffMs: backoff }, 'revocation session failed; reconnecting');
      }
      await this.closeClient();
      if (up && this.stopping) sink.down('stopping');
      if (!this.stopping) {
        await this.sleep(backoff);
        backoff = Math.min(backoff * 2, max);
      }
    }
  }

  private async connect(): Promise<pg.Client> {
    const client = new pg.Client({
      connectionString: this.options.databaseUrl,
      // Renamed to tasks-revocations:<replica> once it listens (store/revocations.ts).
      application_name: 'tasks-revocations-connecting',
      keepAlive: true,
      keepAliveInitialDelayMillis: 5_000,
      connectionTimeoutMillis: 5_000,
    });
    this.client = client;
    client.on('error', () => this.lost(client));
    client.on('end', () => this.lost(client));
    client.on('notification', (message) => {
      if (client !== this.client || message.payload === undefined) return;
      if (message.channel === revocationsChannel) {
        const notice = parseNotice(message.payload);
        if (notice) this.options.sink.revocation(notice);
        else this.options.logger.error({ payload: message.payload.slice(0, 200) }, 'unreadable revocation notification ignored');
      } else if (message.channel === revocationAcksChannel) {
        const ack = parseAck(message.payload);
        if (ack) this.options.sink.ack(ack);
      }
    });
    await client.connect();
    return client;
  }

  /** A round trip, bounded: the session is given up if it does not answer within two intervals. */
  private async ping(client: pg.Client): Promise<void> {
    if (client !== this.client) throw new Error('session lost');
    const timeoutMs = Math.max(2 * this.options.heartbeatIntervalMs, 1_000);
    let timer: NodeJS.Timeout | undefined;
    try {
      await Promise.race([
        client.query('SELECT 1'),
        new Promise((_, reject) => {
          timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
        }),
      ]);
    } finally {
      clearTimeout(timer);
    }
  }

  private lost(client: pg.Client): void {
    if (client !== this.client) return;
    this.client = undefined;
    client.end().catch(() => undefined);
    this.wake?.();
  }

  private async closeClient(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    if (client) await client.end().catch(() => undefined);
  }

  /** Waits `ms`; a stop or a lost session ends the wait early. */
  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      function done(): void {
        clearTimeout(timer);
        resolve();
      }
      this.wake = done;
    });
  }
}
