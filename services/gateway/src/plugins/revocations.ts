import { hostname } from 'node:os';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { RevocationStream, type Revocation, type RevocationListener } from '../clients/revocation-stream.js';
import type { RevocationMetrics } from '../metrics.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** Pushed revocations (tasks.v1.RevocationService); the auth plugin applies them to its caches. */
    revocationFeed: RevocationFeed;
  }
}

export interface RevocationFeed {
  /** Adds a listener; it hears the current trust at once, then every change and every revocation. */
  subscribe(listener: RevocationListener): void;
  /** True while the stream is ready (revocations reach this replica). */
  readonly trusted: boolean;
}

export interface RevocationsOptions {
  metrics: RevocationMetrics;
  /** How long start-up waits for the stream to be ready (then the caches stay bypassed until it is). */
  startupWaitMs?: number;
}

/**
 * Holds the gateway's revocation stream to the tasks service from `ready` until `close`: each
 * revocation is handed to the subscribers (the auth caches evict what it names), and while the stream
 * is not ready the subscribers are told not to trust their caches. Start-up waits briefly for the
 * stream so a fresh replica serves from its caches from the first request when tasks is there.
 */
async function revocationsPlugin(app: FastifyInstance, options: RevocationsOptions): Promise<void> {
  const { metrics } = options;
  const listeners: RevocationListener[] = [];
  let trusted = false;
  const stream = new RevocationStream({
    open: () => app.watchRevocations(),
    watcherName: `gateway@${hostname()}:${process.pid}`,
    logger: app.log.child({ component: 'revocation-stream' }),
    listener: {
      onRevocation(revocation: Revocation) {
        for (const listener of listeners) listener.onRevocation(revocation);
        metrics.received.inc({ kind: revocation.kind });
        const lagMs = revocation.revokedAtMs > 0 ? Date.now() - revocation.revokedAtMs : undefined;
        if (lagMs !== undefined) metrics.lag.observe(Math.max(0, lagMs) / 1000);
        app.log.info({ revocationId: revocation.id, kind: revocation.kind, lagMs }, 'revocation applied to the auth caches');
      },
      onTrustChange(value: boolean) {
        trusted = value;
        metrics.connected.set(value ? 1 : 0);
        for (const listener of listeners) listener.onTrustChange(value);
      },
    },
  });
  metrics.connected.set(0);
  app.decorate('revocationFeed', {
    subscribe(listener: RevocationListener) {
      listeners.push(listener);
      listener.onTrustChange(trusted);
    },
    get trusted() {
      return trusted;
    },
  });
  app.addHook('onReady', async () => {
    stream.start();
    if (!(await stream.whenReady(options.startupWaitMs ?? 2_000))) {
      app.log.warn('revocation stream not ready at start-up: auth lookups bypass the caches until it is');
    }
  });
  app.addHook('onClose', async () => stream.stop());
}

export default fp(revocationsPlugin, { name: 'revocations', dependencies: ['backends'] });
