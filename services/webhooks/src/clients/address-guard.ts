import ipaddr from 'ipaddr.js';

/**
 * SSRF guard: decides whether an IP address may be the target of a webhook request.
 *
 * Only globally routable unicast addresses pass. The range tables come from ipaddr.js (`range()`);
 * on top of them:
 * - IPv6 must be inside 2000::/3 (global unicast), which also rules out the deprecated
 *   IPv4-compatible form `::a.b.c.d` and every other unassigned or special block;
 * - IPv4 embedded in IPv6 (`::ffff:a.b.c.d` mapped, `::ffff:0:a.b.c.d` translated, `64:ff9b::/96`
 *   NAT64, `2002::/16` 6to4) is judged as the IPv4 address it carries;
 * - `64:ff9b:1::/48` (local-use NAT64) and Teredo are refused outright.
 *
 * An operator allow-list of CIDRs (development, tests) exempts addresses before any of this.
 */

export type AddressVerdict =
  | { allowed: true; address: string; family: 4 | 6; reason: 'global' | 'allow-listed' }
  | { allowed: false; address: string; reason: string };

export type Cidr = [ipaddr.IPv4 | ipaddr.IPv6, number];

/** Parses `10.0.0.0/8, 127.0.0.1/32, fd00::/8` (blank = empty list); throws naming the bad entry. */
export function parseCidrList(value: string): Cidr[] {
  return value
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry.length > 0)
    .map((entry) => {
      try {
        const [address, bits] = entry.includes('/') ? ipaddr.parseCIDR(entry) : [ipaddr.parse(entry), -1];
        const normalised = normalise(address);
        const prefix = bits === -1 ? (normalised.kind() === 'ipv4' ? 32 : 128) : normalised !== address ? bits - 96 : bits;
        if (prefix < 0) throw new Error('prefix too short for an IPv4-mapped range');
        return [normalised, prefix] as Cidr;
      } catch {
        throw new Error(`"${entry}" is not an IP address or CIDR`);
      }
    });
}

/** `::ffff:a.b.c.d` → `a.b.c.d`; everything else unchanged. */
function normalise(address: ipaddr.IPv4 | ipaddr.IPv6): ipaddr.IPv4 | ipaddr.IPv6 {
  return address.kind() === 'ipv6' && (address as ipaddr.IPv6).isIPv4MappedAddress()
    ? (address as ipaddr.IPv6).toIPv4Address()
    : address;
}

const globalUnicastV6: [ipaddr.IPv6, number] = [ipaddr.IPv6.parse('2000::'), 3];

/** The IPv4 address carried by a translation or tunnelling form, if this is one. */
function embeddedIPv4(address: ipaddr.IPv6): { via: string; v4: ipaddr.IPv4 } | undefined {
  const range = address.range();
  const parts = address.parts;
  const fromWords = (high: number, low: number): ipaddr.IPv4 =>
    new ipaddr.IPv4([high >> 8, high & 0xff, low >> 8, low & 0xff]);
  if (range === 'ipv4Mapped') return { via: 'IPv4-mapped', v4: address.toIPv4Address() };
  if (range === 'rfc6145') return { via: 'IPv4-translated', v4: fromWords(parts[6]!, parts[7]!) };
  if (address.match(ipaddr.IPv6.parse('64:ff9b::'), 96)) return { via: 'NAT64', v4: fromWords(parts[6]!, parts[7]!) };
  if (range === '6to4') return { via: '6to4', v4: fromWords(parts[1]!, parts[2]!) };
  return undefined;
}

function classifyIPv4(address: ipaddr.IPv4): string | undefined {
  const range = address.range();
  return range === 'unicast' ? undefined : range;
}

/** Why an address is not globally routable, or undefined when it is. */
function nonGlobalReason(address: ipaddr.IPv4 | ipaddr.IPv6): string | undefined {
  if (address.kind() === 'ipv4') return classifyIPv4(address as ipaddr.IPv4);
  const v6 = address as ipaddr.IPv6;
  const embedded = embeddedIPv4(v6);
  if (embedded) {
    const inner = classifyIPv4(embedded.v4);
    return inner ? `${embedded.via} ${inner} (${embedded.v4.toString()})` : undefined;
  }
  const range = v6.range();
  if (range !== 'unicast') return range;
  if (!v6.match(globalUnicastV6)) return 'not global unicast';
  return undefined;
}

function inAllowList(address: ipaddr.IPv4 | ipaddr.IPv6, allowList: readonly Cidr[]): boolean {
  return allowList.some(([network, bits]) => network.kind() === address.kind() && address.match(network, bits));
}

/**
 * Judges one literal address (as printed by DNS or a URL host: `127.0.0.1`, `::1`, `[::1]`).
 * Anything that does not parse as an IP address is refused.
 */
export function checkAddress(literal: string, allowList: readonly Cidr[] = []): AddressVerdict {
  const text = canonicalIPv6(literal.startsWith('[') && literal.endsWith(']') ? literal.slice(1, -1) : literal);
  if (text === undefined || !ipaddr.isValid(text) || text.includes('%')) {
    return { allowed: false, address: literal, reason: 'not an IP address' };
  }
  // ipaddr.parse also accepts shorthand IPv4 (`127.1`, `0x7f.1`); only canonical literals reach here
  // from DNS, and URL hosts were already normalised by the WHATWG parser.
  const parsed = normalise(ipaddr.parse(text));
  const address = parsed.toString();
  const family = parsed.kind() === 'ipv4' ? 4 : 6;
  if (inAllowList(parsed, allowList)) return { allowed: true, address, family, reason: 'allow-listed' };
  const reason = nonGlobalReason(parsed);
  return reason === undefined ? { allowed: true, address, family, reason: 'global' } : { allowed: false, address, reason };
}

/**
 * IPv6 with a dotted tail (`::1.2.3.4`) is rewritten by the WHATWG URL parser into hex words:
 * ipaddr.js would read `::1.2.3.4` as the IPv4-mapped `::ffff:1.2.3.4`, which it is not.
 */
function canonicalIPv6(text: string): string | undefined {
  if (!text.includes(':') || !text.includes('.')) return text;
  try {
    return new URL(`https://[${text}]/`).hostname.slice(1, -1);
  } catch {
    return undefined;
  }
}

/** Dotted-quad shape (what the WHATWG parser leaves of any IPv4 host); ipaddr.js checks the ranges. */
const fourPartDecimal = /^\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3}$/;

export function isIpLiteral(host: string): boolean {
  const text = host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
  // A plain regex first: ipaddr.isValid (and isValidFourPartDecimal, which calls it) throws and
  // catches internally for every host name, 13% of the service's CPU under load.
  return (text.includes(':') || fourPartDecimal.test(text)) && ipaddr.isValid(text);
}

export type UrlVerdict =
  | { ok: true; url: URL; host: string; literal: boolean }
  | { ok: false; reason: string };

/**
 * Static checks of an endpoint URL (no DNS): WHATWG parsing (which also turns `2130706433` and
 * `0x7f000001` into `127.0.0.1`), https only, no credentials, no `localhost`.
 */
export function checkUrl(raw: string): UrlVerdict {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { ok: false, reason: 'url is not a valid URL' };
  }
  if (url.protocol !== 'https:') return { ok: false, reason: 'url must use https' };
  if (url.username !== '' || url.password !== '') return { ok: false, reason: 'url must not contain credentials' };
  const host = url.hostname.toLowerCase();
  if (host === '') return { ok: false, reason: 'url has no host' };
  const bare = host.replace(/\.$/, '');
  if (bare === 'localhost' || bare.endsWith('.localhost')) return { ok: false, reason: 'url must not point to localhost' };
  const literal = isIpLiteral(host);
  return { ok: true, url, host: literal ? host.replace(/^\[|\]$/g, '') : bare, literal };
}
