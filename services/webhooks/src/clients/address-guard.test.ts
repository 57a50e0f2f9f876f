import { describe, expect, it } from 'vitest';
import { checkAddress, checkUrl, isIpLiteral, parseCidrList } from './address-guard.js';

describe('checkAddress', () => {
  const blocked: Array<[string, string]> = [
    ['127.0.0.1', 'loopback'],
    ['127.255.255.254', 'loopback'],
    ['10.1.2.3', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.1.1', 'private'],
    ['169.254.169.254', 'linkLocal'],
    ['100.64.0.1', 'carrierGradeNat'],
    ['100.127.255.255', 'carrierGradeNat'],
    ['0.0.0.0', 'unspecified'],
    ['0.1.2.3', 'unspecified'],
    ['224.0.0.1', 'multicast'],
    ['239.255.255.250', 'multicast'],
    ['255.255.255.255', 'broadcast'],
    ['240.0.0.1', 'reserved'],
    ['192.0.0.8', 'reserved'],
    ['192.0.2.1', 'reserved'],
    ['198.18.0.1', 'reserved'],
    ['198.51.100.7', 'reserved'],
    ['203.0.113.9', 'reserved'],
    ['::1', 'loopback'],
    ['::', 'unspecified'],
    ['fc00::1', 'uniqueLocal'],
    ['fd12:3456::1', 'uniqueLocal'],
    ['fe80::1', 'linkLocal'],
    ['febf::1', 'linkLocal'],
    ['fec0::1', 'deprecatedSiteLocal'],
    ['ff02::1', 'multicast'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:10.0.0.1', 'private'],
    ['::ffff:169.254.169.254', 'linkLocal'],
    ['::ffff:0:127.0.0.1', 'IPv4-translated loopback'],
    ['64:ff9b::7f00:1', 'NAT64 loopback'],
    ['64:ff9b::a9fe:a9fe', 'NAT64 linkLocal'],
    ['64:ff9b:1::1', 'rfc6052'],
    ['2002:7f00:1::1', '6to4 loopback'],
    ['2002:c0a8:101::1', '6to4 private'],
    ['::127.0.0.1', 'not global unicast'],
    ['::8.8.8.8', 'not global unicast'],
    ['::7f00:1', 'not global unicast'],
    ['2001::1', 'teredo'],
    ['2001:db8::1', 'reserved'],
    ['100::1', 'discard'],
    ['5f00::1', 'segmentRouting'],
    ['4000::1', 'not global unicast'],
    ['not-an-ip', 'not an IP address'],
    ['fe80::1%eth0', 'not an IP address'],
  ];
  it.each(blocked)('refuses %s (%s)', (address, reason) => {
    const verdict = checkAddress(address);
    expect(verdict.allowed).toBe(false);
    if (!verdict.allowed) expect(verdict.reason).toContain(reason);
  });

  const allowed: Array<[string, string]> = [
    ['8.8.8.8', '8.8.8.8'],
    ['1.1.1.1', '1.1.1.1'],
    ['172.32.0.1', '172.32.0.1'],
    ['100.128.0.1', '100.128.0.1'],
    ['2606:4700:4700::1111', '2606:4700:4700::1111'],
    ['[2a00:1450:4001:81c::200e]', '2a00:1450:4001:81c::200e'],
    ['::ffff:8.8.8.8', '8.8.8.8'],
    ['64:ff9b::808:808', '64:ff9b::808:808'],
    ['2002:808:808::1', '2002:808:808::1'],
  ];
  it.each(allowed)('allows global %s', (address, normalised) => {
    expect(checkAddress(address)).toMatchObject({ allowed: true, address: normalised, reason: 'global' });
  });

  it('exempts allow-listed ranges only', () => {
    const allowList = parseCidrList('127.0.10.0/24, fd00::/8, 192.168.5.5');
    expect(checkAddress('127.0.10.7', allowList)).toMatchObject({ allowed: true, reason: 'allow-listed' });
    expect(checkAddress('::ffff:127.0.10.7', allowList)).toMatchObject({ allowed: true, address: '127.0.10.7' });
    expect(checkAddress('fd00::5', allowList)).toMatchObject({ allowed: true, reason: 'allow-listed' });
    expect(checkAddress('192.168.5.5', allowList)).toMatchObject({ allowed: true });
    expect(checkAddress('192.168.5.6', allowList).allowed).toBe(false);
    expect(checkAddress('127.0.0.1', allowList).allowed).toBe(false);
    expect(checkAddress('127.0.11.1', allowList).allowed).toBe(false);
  });

  it('parses allow-lists strictly', () => {
    expect(parseCidrList('')).toEqual([]);
    expect(parseCidrList(' , ')).toEqual([]);
    expect(parseCidrList('::ffff:10.0.0.0/104')[0]?.[1]).toBe(8);
    expect(() => parseCidrList('10.0.0.0/8,nope')).toThrow('"nope" is not an IP address or CIDR');
    expect(() => parseCidrList('10.0.0.0/33')).toThrow();
  });
});

describe('checkUrl', () => {
  it.each([
    ['http://example.com/hook', 'url must use https'],
    ['ftp://example.com/hook', 'url must use https'],
    ['example.com/hook', 'url is not a valid URL'],
    ['https://user:pw@example.com/', 'url must not contain credentials'],
    ['https://localhost/hook', 'url must not point to localhost'],
    ['https://LOCALHOST./hook', 'url must not point to localhost'],
    ['https://api.localhost/hook', 'url must not point to localhost'],
  ])('refuses %s', (url, reason) => {
    expect(checkUrl(url)).toEqual({ ok: false, reason });
  });

  it.each([
    ['https://2130706433/', '127.0.0.1'],
    ['https://0x7f000001/', '127.0.0.1'],
    ['https://0x7f.1/', '127.0.0.1'],
    ['https://0177.0.0.1/', '127.0.0.1'],
    ['https://127.1/', '127.0.0.1'],
    ['https://[::ffff:127.0.0.1]/', '::ffff:7f00:1'],
    ['https://[::1]:8443/x', '::1'],
  ])('normalises the numeric host of %s to the literal %s (then judged as an address)', (url, host) => {
    const verdict = checkUrl(url);
    expect(verdict).toMatchObject({ ok: true, host, literal: true });
    expect(checkAddress(host).allowed).toBe(false);
  });

  it('keeps host names as names', () => {
    expect(checkUrl('https://Hooks.Example.com:8443/in?x=1')).toMatchObject({ ok: true, host: 'hooks.example.com', literal: false });
  });

  it.each([
    ['h1.hooks.test', false],
    ['1.2.3.4.example', false],
    ['8.8.8.8', true],
    ['999.1.1.1', false],
    ['[2001:db8::1]', true],
    ['::1', true],
  ])('tells IP literals from host names: %s → %s', (host, literal) => {
    expect(isIpLiteral(host)).toBe(literal);
  });
});
