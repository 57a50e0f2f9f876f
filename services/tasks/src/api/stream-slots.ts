/**
 * At most `limit` holders; a caller beyond waits for a slot, in turn, up to `maxWaitMs` (and is
 * refused at once when `maxWaiting` already wait). A waiter given up on (its call cancelled) leaves
 * the queue without taking a slot.
 */
export class StreamSlots {
  private active = 0;
  private readonly waiters = new Set<() => void>();

  constructor(private readonly options: { limit: number; maxWaiting: number; maxWaitMs: number }) {}

  get inUse(): number {
    return this.active;
  }

  /** True once a slot is held (release it later); false when none came in time or `signal` aborted. */
  async acquire(signal: AbortSignal): Promise<boolean> {
    if (this.active < this.options.limit && this.waiters.size === 0) {
      this.active += 1;
      return true;
    }
    if (this.waiters.size >= this.options.maxWaiting || signal.aborted) return false;
    return new Promise<boolean>((resolve) => {
      const done = (granted: boolean): void => {
        clearTimeout(timer);
        signal.removeEventListener('abort', giveUp);
        this.waiters.delete(grant);
        resolve(granted);
      };
      // release() hands its slot over: `active` stays as it is.
      const grant = (): void => done(true);
      const giveUp = (): void => done(false);
      const timer = setTimeout(giveUp, this.options.maxWaitMs);
      signal.addEventListener('abort', giveUp, { once: true });
      this.waiters.add(grant);
    });
  }

  release(): void {
    const next = this.waiters.values().next();
    if (next.done) this.active -= 1;
    else next.value();
  }
}
