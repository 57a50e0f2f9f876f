/** What the gateway asks the tasks service (tasks.v1.RevocationService.ListRevokedGrants). */
export type ListRevokedGrants = (request: { grantId: string; limit: number }) => Promise<{
  grants: Array<{ grantId: string; expiresAtMs: number }>;
  truncated: boolean;
}>;

/**
 * The OAuth grants revoked at the app's authorization server whose tokens may still be live, as
 * this gateway replica knows them. Kept in memory, bounded: an entry is dropped once its tokens
 * have expired, and at most `maxEntries` are held.
 *
 * The set is only trusted while it is complete ("synced"): the revocation stream is ready AND the
 * list of live revoked grants was loaded after it became ready (pushes arriving meanwhile are kept
 * too, so nothing falls between the two). While it is not (stream down, not loaded yet, or more
 * revoked grants than the cap: the safe fallback), every token's grant is checked with the tasks
 * service instead, one call per request.
 */
export class RevokedGrants {
  private readonly entries = new Map<string, number>();
  private trusted = false;
  private loadedEpoch = -1;
  private epoch = 0;
  private overflow = false;

  constructor(
    private readonly list: ListRevokedGrants,
    private readonly options: { maxEntries: number; onError: (error: unknown) => void; now?: () => number },
  ) {}

  private now(): number {
    return this.options.now?.() ?? Date.now();
  }

  /** True when the local set may answer on its own. */
  get synced(): boolean {
    return this.trusted && this.loadedEpoch === this.epoch && !this.overflow;
  }

  /** A pushed revocation (or a loaded one): refused until `expiresAtMs`. */
  add(grantId: string, expiresAtMs: number): void {
    if (expiresAtMs <= this.now()) return;
    const known = this.entries.get(grantId);
    if (known !== undefined && known >= expiresAtMs) return;
    if (known === undefined && this.entries.size >= this.options.maxEntries) {
      this.prune();
      if (this.entries.size >= this.options.maxEntries) {
        // Full of live entries: stop answering locally (each token is checked with tasks) until a reload fits.
        this.overflow = true;
        return;
      }
    }
    this.entries.set(grantId, expiresAtMs);
  }

  /** The revocation stream became ready (load the live list) or stopped being so (forget being complete). */
  setTrusted(trusted: boolean): void {
    this.trusted = trusted;
    this.epoch++;
    if (trusted) void this.load(this.epoch);
  }

  private async load(epoch: number): Promise<void> {
    try {
      const listed = await this.list({ grantId: '', limit: this.options.maxEntries });
      if (epoch !== this.epoch) return;
      this.prune();
      this.overflow = false;
      for (const grant of listed.grants) this.add(grant.grantId, grant.expiresAtMs);
      if (listed.truncated) this.overflow = true;
      this.loadedEpoch = epoch;
    } catch (error) {
      this.options.onError(error);
      // Retried while the stream stays ready; until then each token's grant is checked with tasks.
      setTimeout(() => {
        if (epoch === this.epoch && this.trusted) void this.load(epoch);
      }, 2_000).unref();
    }
  }

  /** Whether tokens of this grant must be refused (asks the tasks service when the local set is not complete). */
  async isRevoked(grantId: string): Promise<boolean> {
    const expiresAtMs = this.entries.get(grantId);
    if (expiresAtMs !== undefined) {
      if (expiresAtMs > this.now()) return true;
      this.entries.delete(grantId);
    }
    if (this.synced) return false;
    const listed = await this.list({ grantId, limit: 1 });
    const found = listed.grants.find((grant) => grant.grantId === grantId);
    if (found) this.add(found.grantId, found.expiresAtMs);
    return found !== undefined;
  }

  /** Drops the entries whose tokens have expired. */
  prune(): void {
    const now = this.now();
    for (const [grantId, expiresAtMs] of this.entries) if (expiresAtMs <= now) this.entries.delete(grantId);
  }

  get size(): number {
    return this.entries.size;
  }
}
