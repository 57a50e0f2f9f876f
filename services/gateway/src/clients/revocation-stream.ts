import type * as grpc from '@grpc/grpc-js';
import type { FastifyBaseLogger } from 'fastify';
import type { WatchRevocationsRequest } from '@tws/proto-types/generated/tasks/v1/WatchRevocationsRequest';
import type { WatchRevocationsResponse__Output } from '@tws/proto-types/generated/tasks/v1/WatchRevocationsResponse';

/** A revocation as the gateway applies it. */
export type Revocation =
  | { id: string; kind: 'apiKey'; workspaceId: string; apiKeyId: string; revokedAtMs: number }
  | { id: string; kind: 'membership'; workspaceId: string; userId: string; revokedAtMs: number }
  /** An OAuth grant of the app's authorization server: its tokens are refused until `expiresAtMs`. */
  | { id: string; kind: 'grant'; grantId: string; expiresAtMs: number; revokedAtMs: number }
  /** A kind this version does not know (a newer tasks service): the safe reading is "forget everything". */
  | { id: string; kind: 'unknown'; revokedAtMs: number };

export interface RevocationListener {
  /** Applies a revocation (synchronously: it is acknowledged as soon as this returns). */
  onRevocation(revocation: Revocation): void;
  /** Revocations reach this replica (true, from the stream's `ready`) or may not (false). */
  onTrustChange(trusted: boolean): void;
}

export type RevocationCall = grpc.ClientDuplexStream<WatchRevocationsRequest, WatchRevocationsResponse__Output>;

export type StreamState = 'idle' | 'connecting' | 'ready' | 'waiting' | 'stopped';

export interface RevocationStreamOptions {
  /** Opens a WatchRevocations call (tasks.v1.RevocationService). */
  open: () => RevocationCall;
  /** Sent in the subscribing message (the server's logs name the watcher). */
  watcherName: string;
  listener: RevocationListener;
  logger: FastifyBaseLogger;
  /** Reconnection backoff: `initialBackoffMs` doubling to `maxBackoffMs`, each delay jittered (50–100 %). */
  initialBackoffMs?: number;
  maxBackoffMs?: number;
  /** A stream that says nothing (no heartbeat) for this many heartbeat intervals is taken for dead. */
  silentIntervals?: number;
  /** A stream not ready this long after it was opened is given up and opened again. */
  connectTimeoutMs?: number;
  random?: () => number;
}

/** Bounds on the server's announced heartbeat interval (a broken value must not disable the watchdog). */
const minHeartbeatMs = 100;
const maxHeartbeatMs = 30_000;

/**
 * Holds the gateway's one tasks.v1.RevocationService.WatchRevocations stream and tells the caches
 * whether they may be trusted:
 *
 *   idle ─start→ connecting ─ready→ ready ─error / end / silence→ waiting ─(jittered backoff)→ connecting …
 *                     └──────error / end / not ready in time─────────────┘         stop() → stopped
 *
 * Only `ready` trusts the caches: leaving it (the tasks replica went away, the network broke, no
 * heartbeat for `silentIntervals` × the announced interval) reports untrusted at once, so the caches
 * clear and look every credential up until a new stream is ready. Each revocation is applied, then
 * acknowledged on the same stream (the server's RevokeApiKey waits for that acknowledgement).
 */
export class RevocationStream {
  private stateValue: StreamState = 'idle';
  private call: RevocationCall | undefined;
  private reconnectTimer: NodeJS.Timeout | undefined;
  private watchdog: NodeJS.Timeout | undefined;
  private silenceMs = 0;
  private attempt = 0;
  private failures = 0;
  private readyWaiters: Array<() => void> = [];

  constructor(private readonly options: RevocationStreamOptions) {}

  get state(): StreamState {
    return this.stateValue;
  }

  start(): void {
    if (this.stateValue === 'idle') this.connect();
  }

  /** Resolves once the stream is ready, or after `timeoutMs` (whichever comes first). */
  whenReady(timeoutMs: number): Promise<boolean> {
    if (this.stateValue === 'ready') return Promise.resolve(true);
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.readyWaiters = this.readyWaiters.filter((waiter) => waiter !== done);
        resolve(false);
      }, timeoutMs);
      const done = (): void => {
        clearTimeout(timer);
        resolve(true);
      };
      this.readyWaiters.push(done);
    });
  }

  stop(): void {
    if (this.stateValue === 'stopped') return;
    const wasReady = this.stateValue === 'ready';
    this.stateValue = 'stopped';
    clearTimeout(this.reconnectTimer);
    clearTimeout(this.watchdog);
    this.closeCall();
    if (wasReady) this.options.listener.onTrustChange(false);
  }

  private connect(): void {
    this.stateValue = 'connecting';
    let call: RevocationCall;
    try {
      call = this.options.open();
    } catch (error) {
      this.disconnect(`could not open the stream: ${String(error)}`);
      return;
    }
    this.call = call;
    // The server may accept the connection and then say nothing (a hung process): do not wait forever.
    const connectTimeoutMs = this.options.connectTimeoutMs ?? 10_000;
    this.armWatchdog(connectTimeoutMs, `not ready within ${connectTimeoutMs} ms`);
    call.on('data', (message: WatchRevocationsResponse__Output) => {
      if (this.call === call) this.receive(message);
    });
    call.on('error', (error: grpc.ServiceError) => {
      if (this.call === call) this.disconnect(`stream failed: ${error.details || error.message}`);
    });
    call.on('end', () => {
      if (this.call === call) this.disconnect('stream ended by the server');
    });
    this.write({ watcher: this.options.watcherName });
  }

  private receive(message: WatchRevocationsResponse__Output): void {
    switch (message.event) {
      case 'ready': {
        if (this.stateValue !== 'connecting') return this.disconnect('protocol error: a second ready');
        const announced = message.ready?.heartbeatIntervalMs ?? 0;
        const heartbeatMs = Math.min(Math.max(announced, minHeartbeatMs), maxHeartbeatMs);
        this.silenceMs = heartbeatMs * (this.options.silentIntervals ?? 3);
        this.stateValue = 'ready';
        this.attempt = 0;
        if (this.failures > 0) this.options.logger.info({ failures: this.failures }, 'revocation stream ready again: auth caches trusted');
        else this.options.logger.info('revocation stream ready: auth caches trusted');
        this.failures = 0;
        this.armWatchdog();
        this.options.listener.onTrustChange(true);
        for (const waiter of this.readyWaiters.splice(0)) waiter();
        return;
      }
      case 'heartbeat':
        if (this.stateValue === 'ready') this.armWatchdog();
        return;
      case 'revocation': {
        if (this.stateValue !== 'ready') return this.disconnect('protocol error: a revocation before ready');
        const revocation = parseRevocation(message.revocation);
        if (!revocation) return this.disconnect('protocol error: a revocation without its ids');
        this.armWatchdog();
        this.options.listener.onRevocation(revocation);
        this.write({ appliedRevocationId: revocation.id });
        return;
      }
      default:
        // A message kind this version does not know: harmless to ignore.
        return;
    }
  }

  private disconnect(reason: string): void {
    if (this.stateValue === 'stopped' || this.stateValue === 'waiting') return;
    const wasReady = this.stateValue === 'ready';
    this.stateValue = 'waiting';
    clearTimeout(this.watchdog);
    this.closeCall();
    if (wasReady) this.options.listener.onTrustChange(false);
    this.failures += 1;
    const base = Math.min((this.options.initialBackoffMs ?? 100) * 2 ** this.attempt, this.options.maxBackoffMs ?? 5_000);
    const delayMs = Math.round(base / 2 + ((this.options.random ?? Math.random)() * base) / 2);
    this.attempt = Math.min(this.attempt + 1, 30);
    // The loss of a ready stream is worth a warning; repeated failures to reconnect, every tenth.
    if (wasReady || this.failures % 10 === 1) {
      this.options.logger.warn({ reason, delayMs, failures: this.failures }, 'revocation stream down: auth caches cleared and bypassed until it is ready');
    }
    this.reconnectTimer = setTimeout(() => {
      if (this.stateValue === 'waiting') this.connect();
    }, delayMs);
  }

  private armWatchdog(ms = this.silenceMs, reason = `nothing heard for ${this.silenceMs} ms`): void {
    clearTimeout(this.watchdog);
    this.watchdog = setTimeout(() => this.disconnect(reason), ms);
  }

  private write(message: WatchRevocationsRequest): void {
    try {
      this.call?.write(message);
    } catch (error) {
      this.disconnect(`could not write to the stream: ${String(error)}`);
    }
  }

  private closeCall(): void {
    const call = this.call;
    this.call = undefined;
    if (!call) return;
    call.removeAllListeners('data');
    // A cancelled call still reports its status as an 'error' event: keep a listener for it.
    call.removeAllListeners('error');
    call.removeAllListeners('end');
    call.on('error', () => undefined);
    call.cancel();
  }
}

/** The revocation in a message; undefined when a known kind lacks its ids (a broken server). */
export function parseRevocation(message: WatchRevocationsResponse__Output['revocation']): Revocation | undefined {
  if (!message?.id) return undefined;
  const revokedAtMs = Number(message.revokedAtMs);
  const at = Number.isFinite(revokedAtMs) ? revokedAtMs : 0;
  switch (message.kind) {
    case 'REVOCATION_KIND_API_KEY':
      if (!message.workspaceId || !message.apiKeyId) return undefined;
      return { id: message.id, kind: 'apiKey', workspaceId: message.workspaceId, apiKeyId: message.apiKeyId, revokedAtMs: at };
    case 'REVOCATION_KIND_MEMBERSHIP':
      if (!message.workspaceId || !message.userId) return undefined;
      return { id: message.id, kind: 'membership', workspaceId: message.workspaceId, userId: message.userId, revokedAtMs: at };
    case 'REVOCATION_KIND_GRANT': {
      const expiresAtMs = Number(message.expiresAtMs);
      if (!message.grantId || !Number.isFinite(expiresAtMs)) return undefined;
      return { id: message.id, kind: 'grant', grantId: message.grantId, expiresAtMs, revokedAtMs: at };
    }
    default:
      return { id: message.id, kind: 'unknown', revokedAtMs: at };
  }
}
