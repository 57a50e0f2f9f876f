import { generateKeyPairSync } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { isLoopbackHost, loadConfig } from './config.js';

const required = {
  APP_URL: 'https://app.example.com/',
  OIDC_ISSUER_URL: 'https://login.example.com/realms/acme',
  OIDC_CLIENT_ID: 'tws-web',
  OIDC_CLIENT_SECRET: 'secret',
  SESSION_SECRET: 'x'.repeat(32),
  DATABASE_URL: 'postgres://web@db/tws',
  API_PUBLIC_BASE_URL: 'https://api.example.com/',
  OAUTH_SIGNING_KEYS: JSON.stringify({ keys: [generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ format: 'jwk' })] }),
};

describe('config', () => {
  it('has defaults, normalises APP_URL to its origin and derives the cookies’ Secure flag', () => {
    const config = loadConfig(required);
    expect(config).toMatchObject({
      APP_URL: 'https://app.example.com',
      APP_SECURE: true,
      PORT: 8090,
      OPS_PORT: 9090,
      SESSION_IDLE_TIMEOUT_S: 1800,
      SESSION_ABSOLUTE_TIMEOUT_S: 43_200,
      SIGN_IN_RATE_LIMIT_PER_MINUTE: 20,
      OIDC_CLIENT_AUTH_METHOD: 'client_secret_basic',
      TASKS_GRPC_TARGET: '127.0.0.1:50051',
      ATTACHMENTS_GRPC_TARGET: '127.0.0.1:50052',
      API_PUBLIC_BASE_URL: 'https://api.example.com',
      TRUST_PROXY: false,
    });
    expect(loadConfig({ ...required, APP_URL: 'http://127.0.0.1:8090', OIDC_ISSUER_URL: 'http://localhost:5556/dex' }).APP_SECURE).toBe(false);
  });

  it.each([
    [{ APP_URL: undefined }, /APP_URL: is required/],
    [{ APP_URL: 'app.example.com' }, /APP_URL: must be an http\(s\) URL/],
    [{ APP_URL: 'http://app.example.com' }, /APP_URL: must be https \(plain http is accepted only for a loopback host/],
    [{ APP_URL: 'https://example.com/app' }, /APP_URL: must be an origin without a path/],
    [{ APP_URL: 'https://u:p@app.example.com' }, /APP_URL: must have no query, fragment or credentials/],
    [{ OIDC_ISSUER_URL: undefined }, /OIDC_ISSUER_URL: is required/],
    [{ OIDC_ISSUER_URL: 'http://login.example.com' }, /OIDC_ISSUER_URL: must be https/],
    [{ OIDC_CLIENT_ID: undefined }, /OIDC_CLIENT_ID: is required/],
    [{ OIDC_CLIENT_SECRET: '' }, /OIDC_CLIENT_SECRET/],
    [{ OIDC_CLIENT_AUTH_METHOD: 'private_key_jwt' }, /OIDC_CLIENT_AUTH_METHOD/],
    [{ SESSION_SECRET: undefined }, /SESSION_SECRET: is required/],
    [{ SESSION_SECRET: 'short' }, /SESSION_SECRET: must be at least 32 bytes/],
    [{ SESSION_IDLE_TIMEOUT_S: '10' }, /SESSION_IDLE_TIMEOUT_S/],
    [{ SESSION_IDLE_TIMEOUT_S: '3600', SESSION_ABSOLUTE_TIMEOUT_S: '600' }, /SESSION_ABSOLUTE_TIMEOUT_S: must not be shorter than SESSION_IDLE_TIMEOUT_S \(3600\)/],
    [{ SIGN_IN_RATE_LIMIT_PER_MINUTE: '-1' }, /SIGN_IN_RATE_LIMIT_PER_MINUTE/],
    [{ TRUST_PROXY: 'maybe' }, /TRUST_PROXY/],
    [{ DATABASE_URL: 'not a url' }, /DATABASE_URL/],
    [{ API_PUBLIC_BASE_URL: undefined }, /API_PUBLIC_BASE_URL: is required/],
    [{ API_PUBLIC_BASE_URL: 'https://api.example.com/?x=1' }, /API_PUBLIC_BASE_URL: must be a base URL without query/],
    [{ OAUTH_SIGNING_KEYS: undefined }, /OAUTH_SIGNING_KEYS: is required/],
    [{ OAUTH_SIGNING_KEYS: 'not json' }, /OAUTH_SIGNING_KEYS: must be a JWKS JSON document/],
    [{ OAUTH_SIGNING_KEYS: '{"keys":[]}' }, /OAUTH_SIGNING_KEYS.*at least one key/],
    [{ OAUTH_SIGNING_KEYS: '{"keys":[{"kty":"EC","crv":"P-256","x":"a","y":"b"}]}' }, /OAUTH_SIGNING_KEYS.keys.0.d: is required/],
    [{ OAUTH_SIGNING_KEYS: '{"keys":[{"kty":"oct","k":"c2VjcmV0c2VjcmV0c2VjcmV0"}]}' }, /OAUTH_SIGNING_KEYS/],
    [{ OAUTH_SIGNING_KEYS: JSON.stringify({ keys: [{ ...generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ format: 'jwk' }), alg: 'RS256' }] }) }, /OAUTH_SIGNING_KEYS.*"alg"/],
    [{ OAUTH_REGISTRATION_RATE_LIMIT_PER_MINUTE: '-1' }, /OAUTH_REGISTRATION_RATE_LIMIT_PER_MINUTE/],
  ])('%j fails naming the variable', (change, message) => {
    expect(() => loadConfig({ ...required, ...change } as NodeJS.ProcessEnv)).toThrow(message);
  });

  it('knows loopback hosts', () => {
    for (const host of ['127.0.0.1', '127.1.2.3', 'localhost', '[::1]', '::1']) expect(isLoopbackHost(host)).toBe(true);
    for (const host of ['10.0.0.1', 'example.com', '127.0.0.1.example.com', 'localhost.example.com']) expect(isLoopbackHost(host)).toBe(false);
  });
});
