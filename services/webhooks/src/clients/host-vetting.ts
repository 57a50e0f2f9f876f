import { Resolver } from 'node:dns/promises';
import { checkAddress, checkUrl, type AddressVerdict, type Cidr, type UrlVerdict } from './address-guard.js';

/** An endpoint address that passed the SSRF guard: connect to `address`, present `host` (SNI, Host). */
export interface VettedTarget {
  url: URL;
  host: string;
  address: string;
  family: 4 | 6;
}

export type Vetting =
  | { ok: true; target: VettedTarget }
  | {
      ok: false;
      kind: 'invalid' | 'blocked' | 'unresolvable' | 'dns-error';
      /** What a client or the delivery log may see: never an address the name resolved to. */
      reason: string;
      /** For the service log only (operators): the refused address and its range. */
      detail?: string;
    };

interface CachedAnswer {
  /** Each resolved address judged by the SSRF guard (a pure function of the address and allow-list). */
  verdicts: AddressVerdict[];
  expiresAt: number;
}

export interface HostVetterOptions {
  allowList: readonly Cidr[];
  /** `host:port` entries; empty = the system's servers. */
  dnsServers: readonly string[];
  /** Upper bound on how long an answer is reused; the records' TTL is honoured when shorter. */
  maxCacheTtlSeconds: number;
  timeoutMs?: number;
}

const noData = new Set(['ENODATA', 'ENOTFOUND', 'NXDOMAIN', 'ENONAME']);
/** Hosts and URLs remembered (oldest dropped first): a workspace with 10,000 endpoints on as many hosts still hits. */
const maxCachedEntries = 20_000;

/** Adds to a bounded Map, dropping the oldest entries (insertion order) rather than the whole cache. */
function remember<K, V>(map: Map<K, V>, key: K, value: V): void {
  map.delete(key);
  map.set(key, value);
  while (map.size > maxCachedEntries) {
    const oldest = map.keys().next();
    if (oldest.done) break;
    map.delete(oldest.value);
  }
}

/**
 * Resolves endpoint hosts (A and AAAA, through c-ares: no thread pool, TTLs known) and applies the
 * SSRF guard to every address. A host is refused when ANY of its addresses is refused, so a
 * rebinding answer that mixes a public and a private address cannot slip through. Answers are
 * cached for min(TTL, the configured maximum), together with their verdicts; concurrent look-ups
 * of one host share one query. The static URL checks are cached per URL text (they depend on
 * nothing else).
 */
export class HostVetter {
  private readonly resolver: Resolver;
  private readonly cache = new Map<string, CachedAnswer>();
  private readonly inFlight = new Map<string, Promise<CachedAnswer>>();
  private readonly urlChecks = new Map<string, UrlVerdict>();

  constructor(private readonly options: HostVetterOptions) {
    this.resolver = new Resolver({ timeout: options.timeoutMs ?? 2_000, tries: 2 });
    if (options.dnsServers.length > 0) this.resolver.setServers([...options.dnsServers]);
  }

  /** Full check of an endpoint URL: syntax, scheme, host name, then every resolved address. */
  async vet(rawUrl: string): Promise<Vetting> {
    const checked = this.checkUrl(rawUrl);
    if (!checked.ok) return { ok: false, kind: 'invalid', reason: checked.reason };
    const { url, host } = checked;
    if (checked.literal) return this.verdictOf(url, host, [checkAddress(host, this.options.allowList)]);
    let answer: CachedAnswer;
    try {
      answer = await this.resolve(host);
    } catch (error) {
      return { ok: false, kind: 'dns-error', reason: `DNS lookup of ${host} failed: ${(error as Error).message}` };
    }
    if (answer.verdicts.length === 0) return { ok: false, kind: 'unresolvable', reason: 'host does not resolve' };
    return this.verdictOf(url, host, answer.verdicts);
  }

  private checkUrl(rawUrl: string): UrlVerdict {
    let checked = this.urlChecks.get(rawUrl);
    if (!checked) {
      checked = checkUrl(rawUrl);
      remember(this.urlChecks, rawUrl, checked);
    }
    return checked;
  }

  private verdictOf(url: URL, host: string, verdicts: AddressVerdict[]): Vetting {
    const refused = verdicts.find((verdict) => !verdict.allowed);
    if (refused && !refused.allowed) {
      return {
        ok: false,
        kind: 'blocked',
        // The address a name resolves to inside the cluster is not the caller's business (issue #14).
        reason: 'url resolves to a disallowed address',
        detail: `${host} resolves to ${refused.address} (${refused.reason})`,
      };
    }
    // Prefer IPv4: loopback test set-ups and most receivers listen on it.
    const chosen = verdicts.find((verdict) => verdict.allowed && verdict.family === 4) ?? verdicts[0];
    if (!chosen?.allowed) return { ok: false, kind: 'unresolvable', reason: 'host does not resolve' };
    return { ok: true, target: { url, host, address: chosen.address, family: chosen.family } };
  }

  private async resolve(host: string): Promise<CachedAnswer> {
    const cached = this.cache.get(host);
    if (cached && cached.expiresAt > Date.now()) return cached;
    const running = this.inFlight.get(host);
    if (running) return running;
    const query = this.query(host).finally(() => this.inFlight.delete(host));
    this.inFlight.set(host, query);
    return query;
  }

  private async query(host: string): Promise<CachedAnswer> {
    const lookups = await Promise.allSettled([
      this.resolver.resolve4(host, { ttl: true }),
      this.resolver.resolve6(host, { ttl: true }),
    ]);
    const records: Array<{ address: string; ttl: number }> = [];
    const failures: Error[] = [];
    for (const lookup of lookups) {
      if (lookup.status === 'fulfilled') records.push(...lookup.value);
      else if (!noData.has((lookup.reason as NodeJS.ErrnoException).code ?? '')) failures.push(lookup.reason as Error);
    }
    // A server failure for one family with no answer for the other is an error, not "does not resolve".
    if (records.length === 0 && failures.length > 0) throw failures[0]!;
    const ttlSeconds = Math.min(this.options.maxCacheTtlSeconds, ...records.map((record) => record.ttl));
    const answer = {
      verdicts: records.map((record) => checkAddress(record.address, this.options.allowList)),
      expiresAt: Date.now() + ttlSeconds * 1000,
    };
    if (ttlSeconds > 0 && records.length > 0) remember(this.cache, host, answer);
    return answer;
  }
}
