/**
 * Identical reads that arrive while the event loop is busy with one round of I/O share one call:
 * the first schedules it (setImmediate), the others with the same key join it until it is sent;
 * a request arriving after that makes a call of its own. So every answer still comes from a call
 * sent after its request arrived (no cache: a write acknowledged before a read began is in that
 * read's answer), and a burst of reads of one thing costs one RPC instead of one each.
 */
export class SameTickCalls<Answer> {
  private readonly unsent = new Map<string, Promise<Answer>>();

  /** The answer of `call()` for `key`, shared with the other requests of this round asking the same. */
  ask(key: string, call: () => Promise<Answer>): Promise<Answer> {
    const joined = this.unsent.get(key);
    if (joined !== undefined) return joined;
    const sent = new Promise<void>((resolve) => setImmediate(resolve)).then(() => {
      this.unsent.delete(key);
      return call();
    });
    this.unsent.set(key, sent);
    return sent;
  }
}
