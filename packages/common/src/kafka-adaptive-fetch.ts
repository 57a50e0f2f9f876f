import { createRequire } from 'node:module';

/**
 * A consumer that batches its fetches under load (`minBytes` of, say, 32 KiB or `maxWaitTimeInMs` of
 * 25 ms, whichever comes first) pays for that batching when idle: the broker answers every fetch
 * after `maxWaitTimeInMs` with nothing, 40 empty fetches a second at 25 ms, each costing the
 * consumer and the broker CPU (on the bench's 2 cores: ~0.045 core between an idle webhooks
 * replica and the broker). A long wait alone would instead delay the first event after a quiet
 * spell and, with `minBytes` at 1, make one small fetch per event under load.
 *
 * An adaptive fetch does both: after a fetch that brought records, the next one is the consumer's
 * own (batching); after a fetch the broker answered with none, the next one waits up to
 * `idleWaitMs` for a single byte, so the broker answers as soon as a record arrives. The mode is
 * the group's, set by its last fetch that reached a broker (a fetch of paused partitions only, or
 * one that failed, leaves it as it was).
 *
 * kafkajs has no hook for this: `installAdaptiveFetch` wraps `ConsumerGroup#fetch`, which reads
 * `minBytes` and `maxWaitTime` from the group for each fetch, and only groups registered with
 * `adaptFetchWhenIdle` are touched.
 */
export interface AdaptiveFetchPolicy {
  /** How long a fetch after an empty one waits for its first byte. */
  idleWaitMs: number;
}

/** What the wrapper reads and writes of a kafkajs `ConsumerGroup`. */
interface FetchingGroup {
  groupId: string;
  minBytes: number;
  maxWaitTime: number;
}

/** What a fetch returns: kafkajs `Batch`es. */
interface FetchedBatch {
  isEmptyIncludingFiltered(): boolean;
}

type Fetch = (this: FetchingGroup, nodeId: number) => Promise<FetchedBatch[]>;

interface GroupState {
  busyMinBytes: number;
  busyWaitMs: number;
  idle: boolean;
}

const policies = new Map<string, AdaptiveFetchPolicy>();

/** Fetches of `groupId` in this process adapt to idleness from now on (the group's consumers made before or after). */
export function adaptFetchWhenIdle(groupId: string, policy: AdaptiveFetchPolicy): void {
  if (!Number.isInteger(policy.idleWaitMs) || policy.idleWaitMs <= 0) throw new Error(`idleWaitMs must be a positive integer, got ${policy.idleWaitMs}`);
  policies.set(groupId, policy);
}

/** `fetch` of a registered group, in its current mode; the mode follows what the broker returned. */
export function adaptiveFetch(fetch: Fetch, policyOf: (groupId: string) => AdaptiveFetchPolicy | undefined = (id) => policies.get(id)): Fetch {
  const states = new WeakMap<FetchingGroup, GroupState>();
  return async function (this: FetchingGroup, nodeId: number): Promise<FetchedBatch[]> {
    const policy = policyOf(this.groupId);
    if (!policy) return fetch.call(this, nodeId);
    let state = states.get(this);
    if (!state) {
      // The group's own settings, as the consumer was made: the busy mode.
      state = { busyMinBytes: this.minBytes, busyWaitMs: this.maxWaitTime, idle: false };
      states.set(this, state);
    }
    this.minBytes = state.idle ? 1 : state.busyMinBytes;
    this.maxWaitTime = state.idle ? policy.idleWaitMs : state.busyWaitMs;
    const batches = await fetch.call(this, nodeId);
    // None: every partition of that broker paused, or the fetch failed and kafkajs recovered.
    if (batches.length > 0) state.idle = batches.every((batch) => batch.isEmptyIncludingFiltered());
    return batches;
  };
}

const require = createRequire(import.meta.url);
/** kafkajs's consumer group class (one per running consumer). */
const consumerGroupPath = require.resolve('kafkajs/src/consumer/consumerGroup.js');

let installed = false;

/** Wraps kafkajs's `ConsumerGroup#fetch` (once; groups not registered fetch as before). */
export function installAdaptiveFetch(): void {
  if (installed) return;
  installed = true;
  const ConsumerGroup = require(consumerGroupPath) as { prototype: { fetch: Fetch } };
  ConsumerGroup.prototype.fetch = adaptiveFetch(ConsumerGroup.prototype.fetch);
}
