import { describe, expect, it } from 'vitest';
import { isAllowedRedirectUri, registrationRequest } from './oauth-clients.js';
import { audienceOf } from './oauth-provider.js';

describe('dynamic registration rules', () => {
  it.each([
    ['https://app.example.com/callback', true],
    ['http://127.0.0.1:33418/callback', true],
    ['http://[::1]:8000/cb', true],
    ['http://localhost/cb', true],
    ['http://app.example.com/callback', false],
    ['http://10.0.0.1/callback', false],
    ['https://app.example.com/cb#frag', false],
    ['https://user:pw@app.example.com/cb', false],
    ['cursor://callback', false],
    ['javascript:alert(1)', false],
    ['not a url', false],
  ])('%s → %s', (uri, allowed) => {
    expect(isAllowedRedirectUri(uri)).toBe(allowed);
  });

  it('refuses confidential clients, other grants, too many URIs and long names', () => {
    const ok = { redirect_uris: ['https://a.example/cb'] };
    expect(registrationRequest.safeParse(ok).success).toBe(true);
    expect(registrationRequest.safeParse({ ...ok, token_endpoint_auth_method: 'client_secret_basic' }).success).toBe(false);
    expect(registrationRequest.safeParse({ ...ok, grant_types: ['implicit'] }).success).toBe(false);
    expect(registrationRequest.safeParse({ ...ok, grant_types: ['password'] }).success).toBe(false);
    expect(registrationRequest.safeParse({ ...ok, response_types: ['token'] }).success).toBe(false);
    expect(registrationRequest.safeParse({ redirect_uris: Array.from({ length: 11 }, (_, i) => `https://a.example/${i}`) }).success).toBe(false);
    expect(registrationRequest.safeParse({ ...ok, client_name: 'x'.repeat(101) }).success).toBe(false);
    expect(registrationRequest.safeParse({ redirect_uris: [] }).success).toBe(false);
    // The API's scopes are chosen at consent, not registered (an MCP SDK client sends them): dropped; OpenID ones kept.
    expect(registrationRequest.parse({ ...ok, scope: 'read write' })).not.toHaveProperty('scope');
    expect(registrationRequest.parse({ ...ok, scope: 'read offline_access' }).scope).toBe('offline_access');
  });

  it('every resource at or under the base URL has the base URL as audience', () => {
    const base = 'https://api.example.com';
    expect(audienceOf(base, base)).toBe(base);
    expect(audienceOf(`${base}/mcp`, base)).toBe(base);
    expect(audienceOf('https://api.example.com.evil.test', base)).toBeUndefined();
    expect(audienceOf('https://other.example.com', base)).toBeUndefined();
  });
});
