import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK } from 'jose';
import { afterAll, beforeAll, beforeEach, expect, test, vi } from 'vitest';
import { loadConfig } from '../../config.js';
import { ed25519Key, jwtAudience, jwtIssuer, signToken } from '../../testing/harness.js';
import { createTokenVerifier, type TokenRejected, type TokenVerifier } from './jwt.js';

/** The app's authorization server as the gateway sees it: a JWKS endpoint whose keys can rotate. */
const baseUrl = 'https://api.example.test';
let appUrl: string;
let server: http.Server;
let published: JWK[] = [];
let jwksFetches = 0;
let verifier: TokenVerifier;
const external = ed25519Key();

async function esKey(kid: string): Promise<{ privateKey: CryptoKey; jwk: JWK }> {
  const { privateKey, publicKey } = await generateKeyPair('ES256');
  return { privateKey, jwk: { ...(await exportJWK(publicKey)), kid, alg: 'ES256', use: 'sig' } };
}

function appToken(
  key: { privateKey: CryptoKey; jwk: JWK },
  overrides: { typ?: string; aud?: string; iss?: string; clientId?: string | null; grantId?: string } = {},
): Promise<string> {
  const claims: Record<string, unknown> = { scope: 'read write', grant_id: overrides.grantId ?? 'grant-1', jti: `j-${Math.random()}` };
  if (overrides.clientId !== null) claims.client_id = overrides.clientId ?? 'client-1';
  return new SignJWT(claims)
    .setProtectedHeader({ alg: 'ES256', kid: key.jwk.kid!, typ: overrides.typ ?? 'at+jwt' })
    .setIssuer(overrides.iss ?? appUrl)
    .setAudience(overrides.aud ?? baseUrl)
    .setSubject('user-1')
    .setIssuedAt()
    .setExpirationTime('1h')
    .sign(key.privateKey);
}

const rejection = async (token: string): Promise<TokenRejected> => {
  const error = await verifier.verify(token).then(
    () => undefined,
    (caught: unknown) => caught as TokenRejected,
  );
  if (!error) throw new Error('the token was accepted');
  return error;
};

beforeAll(async () => {
  server = http.createServer((request, response) => {
    if (request.url !== '/oauth/jwks') return void response.writeHead(404).end();
    jwksFetches++;
    response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys: published }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  appUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
/** Each test its own verifier (its own JWKS cache), published keys set first. */
beforeEach(async () => {
  const config = loadConfig({
    PUBLIC_BASE_URL: `${baseUrl}/`,
    AUTH_APP_ISSUER_URL: appUrl,
    AUTH_JWT_PUBLIC_KEY: external.publicKeyPem,
    AUTH_JWT_ISSUER: jwtIssuer,
    AUTH_JWT_AUDIENCE: jwtAudience,
  });
  verifier = (await createTokenVerifier(config))!;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

test('trusts the app issuer (its JWKS, at+jwt, aud = PUBLIC_BASE_URL) next to the external one', async () => {
  const first = await esKey('k1');
  published = [first.jwk];
  const verified = await verifier.verify(await appToken(first));
  expect(verified).toMatchObject({ userId: 'user-1', grantId: 'grant-1' });
  expect([...verified.scopes].sort()).toEqual(['read', 'write']);
  const fromCli = await verifier.verify(await signToken(external, { sub: 'user-2', scope: 'read' }));
  expect(fromCli.userId).toBe('user-2');
  expect(fromCli.grantId).toBeUndefined();
});

test('signing-key rotation: a token with a new kid refetches the JWKS (at most every 5 s)', async () => {
  vi.useFakeTimers({ toFake: ['Date'] });
  try {
    const first = await esKey('rot-1');
    published = [first.jwk];
    await verifier.verify(await appToken(first));
    const second = await esKey('rot-2');
    published = [second.jwk, first.jwk];
    const before = jwksFetches;
    // Within the cooldown of the last fetch, an unknown kid is refused without another fetch.
    expect((await rejection(await appToken(second))).message).toBe('invalid token');
    expect(jwksFetches).toBe(before);
    vi.setSystemTime(Date.now() + 6_000);
    expect((await verifier.verify(await appToken(second))).userId).toBe('user-1');
    expect(jwksFetches).toBe(before + 1);
    // The old key is still published: its tokens keep working until they expire.
    expect((await verifier.verify(await appToken(first))).userId).toBe('user-1');
  } finally {
    vi.useRealTimers();
  }
});

test('refused: unknown iss (no fetch), another audience, no typ at+jwt, no client_id, an external token under the app iss', async () => {
  const key = await esKey('k-attack');
  published = [key.jwk];
  const fetches = jwksFetches;
  expect((await rejection(await appToken(key, { iss: 'https://evil.example' }))).message).toBe('invalid token: unknown issuer');
  expect(jwksFetches).toBe(fetches);
  expect((await rejection(await signToken(external, { sub: 'u', iss: 'elsewhere' }))).message).toBe('invalid token: unknown issuer');
  expect((await rejection('not.a.jwt')).message).toBe('invalid token');
  expect((await rejection('x'.repeat(9_000))).message).toBe('invalid token: too long');
  expect((await rejection(await appToken(key, { aud: 'https://other-api.example' }))).message).toBe('invalid token: "aud" claim check failed');
  expect((await rejection(await appToken(key, { typ: 'JWT' }))).message).toBe('invalid token: "typ" claim check failed');
  expect((await rejection(await appToken(key, { clientId: null }))).message).toBe('invalid token: "client_id" claim check failed');
  // The CLI's key signing a token that claims the app as issuer: verified with the app's keys only.
  const forged = await signToken(external, { sub: 'user-1', iss: appUrl, aud: baseUrl });
  expect((await rejection(forged)).message).toBe('invalid token');
});

test('config: the app JWKS URL needs the app issuer; the external issuer must be another one', () => {
  expect(() => loadConfig({ PUBLIC_BASE_URL: baseUrl, AUTH_APP_JWKS_URL: 'https://web/oauth/jwks' })).toThrow(/AUTH_APP_JWKS_URL: is set but AUTH_APP_ISSUER_URL is not/);
  expect(() =>
    loadConfig({ PUBLIC_BASE_URL: baseUrl, AUTH_APP_ISSUER_URL: 'https://app.example', AUTH_JWT_PUBLIC_KEY: external.publicKeyPem, AUTH_JWT_ISSUER: 'https://app.example/', AUTH_JWT_AUDIENCE: 'a' }),
  ).toThrow(/AUTH_JWT_ISSUER: names the app issuer/);
  expect(loadConfig({ PUBLIC_BASE_URL: baseUrl, AUTH_APP_ISSUER_URL: 'https://app.example/' }).AUTH_APP_ISSUER_URL).toBe('https://app.example');
});
