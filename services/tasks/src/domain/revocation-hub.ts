import type { Logger } from '@tws/common';
import type { RevocationHubMetrics } from '../metrics.js';
import type { RevocationNotice } from './revocations.js';

/** What a watcher (a gateway's WatchRevocations stream) is sent. */
export type WatcherEvent =
  | { type: 'ready'; heartbeatIntervalMs: number }
  | { type: 'heartbeat' }
  | { type: 'revocation'; notice: RevocationNotice };

/** Why a stream is ended by the server: `unavailable` (retry, maybe elsewhere) or `exhausted` (over a bound). */
export type CloseKind = 'unavailable' | 'exhausted';

/** One watcher's stream, as the API layer adapts it. */
export interface WatcherSink {
  /** Queues an event; false when the stream's send buffer is over its bound (the watcher is too slow). */
  send(event: WatcherEvent): boolean;
  /** Ends the stream with an error status. */
  close(kind: CloseKind, details: string): void;
}

export interface WatcherHandle {
  /** The watcher applied a revocation. */
  acknowledge(revocationId: string): void;
  /** The stream ended from the client's side. */
  leave(): void;
}

export interface RevocationHubOptions {
  replicaId: string;
  heartbeatIntervalMs: number;
  /** A watcher that has not acknowledged a revocation after this long is cut off. */
  ackTimeoutMs: number;
  maxWatchers: number;
  /** Revocations a watcher may leave unacknowledged at once before it is cut off. */
  maxUnacked: number;
  logger: Logger;
  metrics: RevocationHubMetrics;
  /** This replica's watchers all applied (or were cut off from) revocation `id`. */
  onReplicaAcked(id: string): void;
}

class Watcher {
  readonly unacked = new Set<string>();
  constructor(
    readonly name: string,
    readonly sink: WatcherSink,
  ) {}
}

interface Delivery {
  waiting: Set<Watcher>;
  timer: NodeJS.Timeout;
}

type DropReason = 'slow' | 'ack_timeout' | 'listener_down' | 'shutdown';

/**
 * This replica's watchers (gateways' WatchRevocations streams) and what it owes them:
 * - a watcher is accepted (and sent `ready`) only while this replica's LISTEN session is up, at most
 *   `maxWatchers` of them; losing the session ends every stream (UNAVAILABLE), so no gateway believes
 *   it hears revocations when this replica does not;
 * - a heartbeat follows each successful round trip of the LISTEN session;
 * - each revocation heard is sent to every watcher; once all acknowledged it (or were cut off: no
 *   acknowledgement within `ackTimeoutMs`, more than `maxUnacked` pending, or a full send buffer),
 *   `onReplicaAcked` reports it. Nothing is buffered without bound: a slow watcher is dropped, and a
 *   dropped gateway clears its caches and reconnects.
 */
export class RevocationHub {
  private listening = false;
  private closed = false;
  private readonly watchers = new Set<Watcher>();
  private readonly deliveries = new Map<string, Delivery>();

  constructor(private readonly options: RevocationHubOptions) {}

  get watcherCount(): number {
    return this.watchers.size;
  }

  /** The LISTEN session is up: watchers may subscribe. */
  listenerUp(): void {
    this.listening = true;
    this.options.metrics.listenerConnected.set(1);
  }

  /** The LISTEN session is lost: every watcher is cut off (they retry, here or on another replica). */
  listenerDown(reason: string): void {
    this.listening = false;
    this.options.metrics.listenerConnected.set(0);
    for (const watcher of [...this.watchers]) {
      this.drop(watcher, 'listener_down', 'unavailable', `this tasks replica lost its revocation session (${reason}); reconnect`);
    }
  }

  /** The LISTEN session answered a round trip: tell every watcher it is still connected. */
  heartbeat(): void {
    if (!this.listening) return;
    for (const watcher of [...this.watchers]) {
      if (!watcher.sink.send({ type: 'heartbeat' })) this.drop(watcher, 'slow', 'exhausted', 'watcher too slow: messages not read');
    }
  }

  subscribe(name: string, sink: WatcherSink): WatcherHandle | undefined {
    if (this.closed) {
      sink.close('unavailable', 'this tasks replica is shutting down; reconnect');
      return undefined;
    }
    if (!this.listening) {
      sink.close('unavailable', 'this tasks replica is not hearing revocations (database session down); reconnect');
      return undefined;
    }
    if (this.watchers.size >= this.options.maxWatchers) {
      sink.close('exhausted', `this tasks replica already serves ${this.options.maxWatchers} watchers`);
      return undefined;
    }
    const watcher = new Watcher(name, sink);
    this.watchers.add(watcher);
    this.options.metrics.watchers.set(this.watchers.size);
    if (!sink.send({ type: 'ready', heartbeatIntervalMs: this.options.heartbeatIntervalMs })) {
      this.drop(watcher, 'slow', 'exhausted', 'watcher too slow: messages not read');
      return undefined;
    }
    this.options.logger.info({ watcher: name, watchers: this.watchers.size }, 'revocation watcher subscribed');
    return {
      acknowledge: (id) => {
        if (!watcher.unacked.delete(id)) return;
        this.deliveries.get(id)?.waiting.delete(watcher);
        this.settle(id);
      },
      leave: () => this.remove(watcher),
    };
  }

  /** A revocation was committed (by any replica): send it to every watcher and wait for them. */
  deliver(notice: RevocationNotice): void {
    if (this.deliveries.has(notice.id)) return;
    this.options.metrics.delivered.inc();
    const waiting = new Set<Watcher>();
    for (const watcher of [...this.watchers]) {
      if (watcher.unacked.size >= this.options.maxUnacked || !watcher.sink.send({ type: 'revocation', notice })) {
        this.drop(watcher, 'slow', 'exhausted', 'watcher too slow: revocations not acknowledged');
        continue;
      }
      watcher.unacked.add(notice.id);
      waiting.add(watcher);
    }
    const timer = setTimeout(() => {
      const late = [...(this.deliveries.get(notice.id)?.waiting ?? [])];
      for (const watcher of late) {
        this.drop(watcher, 'ack_timeout', 'unavailable', `revocation not acknowledged within ${this.options.ackTimeoutMs} ms`);
      }
      this.settle(notice.id);
    }, this.options.ackTimeoutMs);
    this.deliveries.set(notice.id, { waiting, timer });
    this.settle(notice.id);
  }

  /** Ends every stream (shutdown, before the gRPC drain) and refuses new ones. */
  closeAll(details: string): void {
    this.closed = true;
    for (const watcher of [...this.watchers]) this.drop(watcher, 'shutdown', 'unavailable', details);
  }

  private settle(id: string): void {
    const delivery = this.deliveries.get(id);
    if (!delivery || delivery.waiting.size > 0) return;
    clearTimeout(delivery.timer);
    this.deliveries.delete(id);
    this.options.onReplicaAcked(id);
  }

  private drop(watcher: Watcher, reason: DropReason, kind: CloseKind, details: string): void {
    if (!this.remove(watcher)) return;
    this.options.metrics.dropped.inc({ reason });
    this.options.logger.warn({ watcher: watcher.name, reason, details }, 'revocation watcher cut off');
    watcher.sink.close(kind, details);
  }

  /** Forgets a watcher (and stops waiting for its acknowledgements); false if it was already gone. */
  private remove(watcher: Watcher): boolean {
    if (!this.watchers.delete(watcher)) return false;
    this.options.metrics.watchers.set(this.watchers.size);
    const pending = [...watcher.unacked];
    watcher.unacked.clear();
    for (const id of pending) this.deliveries.get(id)?.waiting.delete(watcher);
    for (const id of pending) this.settle(id);
    return true;
  }
}
