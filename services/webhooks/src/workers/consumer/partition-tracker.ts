/**
 * Offsets of one topic partition that were handed to workers, in fetch order, and which of them
 * finished. The committable offset is the one after the longest finished prefix: a message that is
 * still running (or failed) holds back every commit after it, so nothing unfinished is skipped.
 */
export class PartitionTracker {
  /** Offsets in increasing order with their state; finished ones before the first unfinished one are dropped on commit. */
  private readonly entries = new Map<string, { done: boolean; failed: boolean }>();
  private readonly order: string[] = [];
  private head = 0;
  private lastCommitted: string | undefined;
  private open = 0;

  constructor(
    readonly topic: string,
    readonly partition: number,
  ) {}

  has(offset: string): boolean {
    return this.entries.has(offset);
  }

  /** Messages handed over and not finished. */
  get unfinished(): number {
    return this.open;
  }

  add(offset: string, done: Promise<void>): void {
    const entry = { done: false, failed: false };
    this.entries.set(offset, entry);
    this.order.push(offset);
    this.open += 1;
    done.then(
      () => {
        entry.done = true;
        this.open -= 1;
      },
      () => {
        // Stays unfinished for commit purposes: the message is handled again after a restart or rebalance.
        entry.failed = true;
        this.open -= 1;
      },
    );
  }

  /** The next offset to commit (last finished prefix + 1), or undefined when nothing new finished. */
  committable(): string | undefined {
    let last: string | undefined;
    for (let index = this.head; index < this.order.length; index++) {
      const entry = this.entries.get(this.order[index]!);
      if (!entry?.done) break;
      last = this.order[index];
    }
    if (last === undefined) return undefined;
    const next = (BigInt(last) + 1n).toString();
    return next === this.lastCommitted ? undefined : next;
  }

  /** Forgets offsets below a committed one. */
  committed(next: string): void {
    this.lastCommitted = next;
    const bound = BigInt(next);
    while (this.head < this.order.length && BigInt(this.order[this.head]!) < bound) {
      this.entries.delete(this.order[this.head]!);
      this.head += 1;
    }
    if (this.head > 1024) {
      this.order.splice(0, this.head);
      this.head = 0;
    }
  }
}
