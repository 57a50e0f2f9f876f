import { expect, test } from 'vitest';
import { loadConfig } from './config.js';
import { ed25519Key } from './testing/harness.js';

const pem = ed25519Key().publicKeyPem;
const required = { PUBLIC_BASE_URL: 'https://api.example.com/' };

test('defaults', () => {
  const config = loadConfig(required);
  expect(config).toMatchObject({
    PUBLIC_BASE_URL: 'https://api.example.com',
    AUTH_API_KEY_CACHE_TTL_MS: 5000,
    AUTH_MEMBERSHIP_CACHE_TTL_MS: 5000,
    AUTH_JWT_ALGORITHMS: ['EdDSA', 'RS256', 'ES256'],
    AUTH_JWT_CLOCK_TOLERANCE_SECONDS: 5,
    RATE_LIMIT_PER_SECOND: 50,
    RATE_LIMIT_BURST: 200,
    RATE_LIMIT_SYNC_INTERVAL_MS: 500,
    RATE_LIMIT_SYNC_MAX_KEYS: 5000,
    AUTH_FAILURES_PER_MINUTE: 30,
  });
  expect(config.AUTH_JWT_PUBLIC_KEY).toBeUndefined();
  expect(config.AUTH_JWT_JWKS_URL).toBeUndefined();
});

test('a PEM squeezed into one line with \\n escapes is restored', () => {
  const config = loadConfig({ ...required, AUTH_JWT_PUBLIC_KEY: pem.replace(/\n/g, '\\n'), AUTH_JWT_ISSUER: 'i', AUTH_JWT_AUDIENCE: 'a, b' });
  expect(config.AUTH_JWT_PUBLIC_KEY).toBe(pem.trim());
  expect(config.AUTH_JWT_AUDIENCE).toEqual(['a', 'b']);
});

test.each([
  [{ AUTH_JWT_ALGORITHMS: 'HS256' }, /AUTH_JWT_ALGORITHMS\.0: unsupported algorithm "HS256"/],
  [{ AUTH_JWT_ALGORITHMS: 'none' }, /unsupported algorithm "none"/],
  [{ AUTH_JWT_PUBLIC_KEY: pem }, /AUTH_JWT_ISSUER: is required when Bearer tokens are enabled; AUTH_JWT_AUDIENCE: is required/],
  [{ AUTH_JWT_PUBLIC_KEY: pem, AUTH_JWT_JWKS_URL: 'https://idp/jwks', AUTH_JWT_ISSUER: 'i', AUTH_JWT_AUDIENCE: 'a' }, /set only one of them/],
  [{ AUTH_JWT_PUBLIC_KEY: 'secret' }, /AUTH_JWT_PUBLIC_KEY: must be a PEM/],
  [{ AUTH_JWT_JWKS_URL: 'ftp://idp/jwks' }, /AUTH_JWT_JWKS_URL/],
  [{ RATE_LIMIT_PER_SECOND: '-1' }, /RATE_LIMIT_PER_SECOND/],
  // The docs once said 0 meant "no limit": the refusal names the variable that does that.
  [{ RATE_LIMIT_BURST: '0' }, /RATE_LIMIT_BURST: must be at least 1 \(to turn the rate limit off, set RATE_LIMIT_PER_SECOND=0\)/],
  [{ RATE_LIMIT_SYNC_INTERVAL_MS: '50' }, /RATE_LIMIT_SYNC_INTERVAL_MS: must be 0 \(no sharing\) or between 100 and 10000/],
  [{ RATE_LIMIT_SYNC_MAX_KEYS: '10001' }, /RATE_LIMIT_SYNC_MAX_KEYS/],
  [{ PUBLIC_BASE_URL: 'api.example.com' }, /PUBLIC_BASE_URL: must be an http\(s\) URL/],
  [{ PUBLIC_BASE_URL: 'ftp://api.example.com' }, /PUBLIC_BASE_URL: must be an http\(s\) URL/],
  [{ PUBLIC_BASE_URL: 'https://api.example.com/?x=1' }, /PUBLIC_BASE_URL: must be a base URL without query/],
])('%j is refused', (env, message) => {
  expect(() => loadConfig({ ...required, ...env })).toThrow(message);
});

test('PUBLIC_BASE_URL is required: URLs are never built from the request', () => {
  expect(() => loadConfig({})).toThrow(/PUBLIC_BASE_URL: is required/);
  expect(() => loadConfig({ PUBLIC_BASE_URL: ' ' })).toThrow(/PUBLIC_BASE_URL: is required/);
});
