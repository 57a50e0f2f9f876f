import type { LookupAddress, LookupOptions } from 'node:dns';
import * as tls from 'node:tls';
import { performance } from 'node:perf_hooks';
import { Pool, errors as undiciErrors, type Dispatcher } from 'undici';
import { signPayload } from '../domain/signing/signature.js';
import { standardWebhookHeaders } from '../domain/signing/standard-webhooks.js';
import type { HostVetter, VettedTarget } from './host-vetting.js';

export const userAgent = 'Service-Webhook/1.0';

export interface DeliveryRequest {
  /** Keep-alive pools are per endpoint: endpoints sharing a host do not share (or exhaust) connections. */
  endpointId: string;
  url: string;
  eventType: string;
  eventId: string;
  secret: string;
  /** Rotated-out secrets still in their overlap: they sign webhook-signature too (never X-Service-Signature). */
  previousSecrets?: readonly string[] | undefined;
  /** The exact payload bytes: sent as the body and signed. */
  body: Buffer;
}

export type AttemptResult =
  | { outcome: 'succeeded'; statusCode: number; startedAt: Date; durationMs: number }
  | { outcome: 'failed'; statusCode?: number; error: string; startedAt: Date; durationMs: number }
  | { outcome: 'blocked'; error: string; startedAt: Date; durationMs: number; detail?: string | undefined };

export interface SenderOptions {
  vetter: HostVetter;
  timeoutMs: number;
  bodyLimitBytes: number;
  /** Keep-alive connections per vetted address. */
  connectionsPerTarget: number;
  /** PEM bundle trusted in addition to the system roots. */
  extraCa?: string | undefined;
}

interface PoolEntry {
  pool: Pool;
  lastUsed: number;
}

const idlePoolMs = 60_000;
/**
 * Keep-alive pools held at most (the least recently used is closed): each idle TLS connection holds
 * ~0.12 MB of this process, and a fan-out to 10,000 endpoints must not keep 10,000 of them. Measured
 * peak RSS of a 10,000-endpoint fan-out (`bench/scale/fanout-10k.mjs`): 240 MB with 500 pools, 205 MB
 * with 200, 189 MB with 100; deliveries/s the same (each delivery there is a new connection anyway).
 * Endpoints past the 100 most recently used reconnect for their next delivery.
 */
export const maxKeepAlivePools = 100;

/**
 * Sends webhook attempts. Every attempt vets the endpoint's host again (DNS + SSRF guard), then
 * connects to the vetted address itself: the connection's `lookup` returns that address, so no
 * second resolution can be rebound, while TLS SNI, certificate checks and the Host header use the
 * URL's host. Keep-alive pools are per (endpoint, URL, vetted address); redirects are never followed
 * (undici's Pool has no redirect handling); one deadline bounds the whole attempt; the response
 * body is read up to a cap and discarded.
 */
export class WebhookSender {
  private readonly pools = new Map<string, PoolEntry>();
  private readonly sweeper: NodeJS.Timeout;
  /** Built once: a per-connection `ca` option would parse the whole root store on every TLS connect. */
  private readonly secureContext: tls.SecureContext | undefined;

  constructor(private readonly options: SenderOptions) {
    // The default store (bundled roots plus NODE_EXTRA_CA_CERTS) and the configured extra bundle.
    this.secureContext = options.extraCa
      ? tls.createSecureContext({ ca: [...tls.getCACertificates('default'), options.extraCa] })
      : undefined;
    this.sweeper = setInterval(() => this.sweep(), idlePoolMs / 2);
    this.sweeper.unref();
  }

  async send(request: DeliveryRequest): Promise<AttemptResult> {
    const startedAt = new Date();
    const started = performance.now();
    const elapsed = (): number => Math.round(performance.now() - started);
    // One deadline for the whole attempt: DNS vetting and the request share it.
    const { timeoutMs } = this.options;
    const vetting = await this.options.vetter.vet(request.url);
    if (performance.now() - started >= timeoutMs) {
      return { outcome: 'failed', error: `timeout: DNS lookup did not complete within ${timeoutMs} ms`, startedAt, durationMs: elapsed() };
    }
    if (!vetting.ok) {
      if (vetting.kind === 'blocked' || vetting.kind === 'invalid') {
        return { outcome: 'blocked', error: vetting.reason, detail: vetting.detail, startedAt, durationMs: elapsed() };
      }
      return { outcome: 'failed', error: vetting.reason, startedAt, durationMs: elapsed() };
    }
    const { target } = vetting;
    try {
      const statusCode = await post(
        this.poolFor(request.endpointId, target),
        {
          method: 'POST',
          path: `${target.url.pathname}${target.url.search}`,
          headers: {
            'content-type': 'application/json',
            'user-agent': userAgent,
            'x-service-event': request.eventType,
            'x-service-delivery': request.eventId,
            // The contract header: the current secret only, also during a rotation's overlap.
            'x-service-signature': signPayload(request.secret, request.body),
            // Standard Webhooks: the event id, and this attempt's time (signed with the body), by every live secret.
            ...standardWebhookHeaders(request.secret, request.eventId, request.body, new Date(), request.previousSecrets),
          },
          body: request.body,
        },
        this.options.bodyLimitBytes,
        timeoutMs - (performance.now() - started),
      );
      if (statusCode >= 200 && statusCode < 300) return { outcome: 'succeeded', statusCode, startedAt, durationMs: elapsed() };
      return { outcome: 'failed', statusCode, error: `HTTP ${statusCode}`, startedAt, durationMs: elapsed() };
    } catch (error) {
      return { outcome: 'failed', error: describeError(error, timeoutMs), startedAt, durationMs: elapsed() };
    }
  }

  private poolFor(endpointId: string, target: VettedTarget): Pool {
    // By the whole URL (its origin is computed on every read; an endpoint has one URL at a time).
    const key = `${endpointId}|${target.url.href}|${target.address}`;
    const existing = this.pools.get(key);
    if (existing) {
      existing.lastUsed = Date.now();
      // Kept in least recently used order (Map insertion order): eviction takes the first entry.
      this.pools.delete(key);
      this.pools.set(key, existing);
      return existing.pool;
    }
    if (this.pools.size >= maxKeepAlivePools) this.evictOldest();
    const { address, family } = target;
    const pool = new Pool(target.url.origin, {
      connections: this.options.connectionsPerTarget,
      pipelining: 1,
      keepAliveTimeout: 30_000,
      keepAliveMaxTimeout: 60_000,
      headersTimeout: this.options.timeoutMs,
      bodyTimeout: this.options.timeoutMs,
      connect: {
        timeout: this.options.timeoutMs,
        ...(this.secureContext ? { secureContext: this.secureContext } : {}),
        // The vetted address, never a fresh DNS answer (DNS rebinding).
        lookup: (_hostname: string, options: LookupOptions, callback: LookupCallback) => {
          if (options.all) (callback as (error: null, addresses: LookupAddress[]) => void)(null, [{ address, family }]);
          else (callback as (error: null, address: string, family: number) => void)(null, address, family);
        },
      },
    });
    this.pools.set(key, { pool, lastUsed: Date.now() });
    return pool;
  }

  private sweep(): void {
    const now = Date.now();
    for (const [key, entry] of this.pools) {
      if (now - entry.lastUsed > idlePoolMs) {
        this.pools.delete(key);
        void entry.pool.close().catch(() => undefined);
      }
    }
  }

  /** The least recently used pool (first in the Map): O(1), so a fan-out to 10,000 new endpoints does not scan the pools per attempt. */
  private evictOldest(): void {
    const oldest = this.pools.entries().next();
    if (oldest.done) return;
    const [key, entry] = oldest.value;
    this.pools.delete(key);
    void entry.pool.close().catch(() => undefined);
  }

  async close(): Promise<void> {
    clearInterval(this.sweeper);
    const pools = [...this.pools.values()];
    this.pools.clear();
    await Promise.all(pools.map(({ pool }) => pool.close().catch(() => pool.destroy())));
  }
}

type LookupCallback =
  | ((error: NodeJS.ErrnoException | null, address: string, family: number) => void)
  | ((error: NodeJS.ErrnoException | null, addresses: LookupAddress[]) => void);

function describeError(error: unknown, timeoutMs: number): string {
  if (error instanceof AttemptTimeout || error instanceof undiciErrors.HeadersTimeoutError || error instanceof undiciErrors.BodyTimeoutError) {
    return `timeout: no complete response within ${timeoutMs} ms`;
  }
  if (error instanceof undiciErrors.ConnectTimeoutError) return `timeout: connect did not complete within ${timeoutMs} ms`;
  const { code, message } = error as NodeJS.ErrnoException;
  const cause = (error as { cause?: NodeJS.ErrnoException }).cause;
  const text = [code ?? cause?.code, message].filter(Boolean).join(': ');
  // The delivery log shows the error: no address the host resolved to (e.g. "connect ECONNREFUSED 10.0.0.7:443").
  return (text.replace(addressPattern, '<address>') || 'request failed').slice(0, 500);
}

/** IPv4 and IPv6 literals (with an optional port) in error messages. */
const addressPattern = /\[?(?:\d{1,3}(?:\.\d{1,3}){3}|[0-9a-f]{0,4}(?::[0-9a-f]{0,4}){2,7}(?:\d{1,3}(?:\.\d{1,3}){3})?)\]?(?::\d{1,5})?/gi;

class AttemptTimeout extends Error {
  constructor() {
    super('attempt deadline reached');
  }
}

/**
 * One request through the pool with a bare dispatch handler rather than `pool.request`: no
 * response stream, async iterator or abort-signal listeners per attempt (measurable at thousands of
 * deliveries per second). Resolves with the final status once the body is read, or once the body
 * passes the cap (the connection is then dropped instead of reading a huge or endless body);
 * rejects at the deadline, aborting the request wherever it is (still queued, sending, reading).
 */
function post(pool: Pool, options: Dispatcher.DispatchOptions, bodyLimitBytes: number, timeoutMs: number): Promise<number> {
  return new Promise((resolve, reject) => {
    let controller: Dispatcher.DispatchController | undefined;
    let statusCode = 0;
    let read = 0;
    let settled = false;
    const finish = (error?: Error): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (error) reject(error);
      else resolve(statusCode);
    };
    const timer = setTimeout(() => {
      const timeout = new AttemptTimeout();
      controller?.abort(timeout);
      finish(timeout);
    }, Math.max(0, timeoutMs));
    pool.dispatch(options, {
      onRequestStart(started) {
        controller = started;
        if (settled) started.abort(new AttemptTimeout());
      },
      onResponseStart(_controller, status) {
        statusCode = status;
      },
      onResponseData(started, chunk) {
        read += chunk.length;
        if (read > bodyLimitBytes) {
          finish();
          started.abort(new Error('response body over the cap'));
        }
      },
      onResponseEnd() {
        finish();
      },
      onResponseError(_controller, error) {
        finish(error);
      },
    });
  });
}
