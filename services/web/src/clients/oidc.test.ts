import { createHash } from 'node:crypto';
import * as client from 'openid-client';
import { describe, expect, it } from 'vitest';
import { createLogger } from '@tws/common';
import { closedPort } from '../testing/ports.js';
import { ProviderUnavailable, RelyingParty, SignInRefused } from './oidc.js';

/*
 * The relying party's own steps, with the provider's configuration given as metadata (no provider
 * runs here: the whole sign-in through a real provider is the browser test). Every endpoint is a
 * closed loopback port, so a step that wrongly reached the network would fail as "unavailable".
 */
const port = await closedPort();
const issuer = `http://127.0.0.1:${port}`;
const metadata: client.ServerMetadata = {
  issuer,
  authorization_endpoint: `${issuer}/authorize`,
  token_endpoint: `${issuer}/token`,
  jwks_uri: `${issuer}/jwks`,
  code_challenge_methods_supported: ['S256'],
};
const logger = createLogger('oidc-test');
logger.level = 'silent';

function relyingParty(discover: () => Promise<client.Configuration>): RelyingParty {
  return new RelyingParty({
    issuer: new URL(issuer),
    clientId: 'tws-web',
    clientSecret: 'secret',
    clientAuthMethod: 'client_secret_basic',
    redirectUri: 'http://127.0.0.1:8090/auth/callback',
    timeoutMs: 2_000,
    logger,
    discover,
  });
}

const configured = () => {
  const config = new client.Configuration(metadata, 'tws-web', undefined, client.ClientSecretBasic('secret'));
  client.allowInsecureRequests(config);
  return relyingParty(async () => config);
};

describe('RelyingParty', () => {
  it('begins with an authorization code request: PKCE S256, fresh state and nonce, the registered redirect URI', async () => {
    const rp = configured();
    const { url, flow } = await rp.begin('/acme/settings');
    expect(`${url.origin}${url.pathname}`).toBe(`${issuer}/authorize`);
    const params = Object.fromEntries(url.searchParams);
    expect(params).toEqual({
      client_id: 'tws-web',
      response_type: 'code',
      redirect_uri: 'http://127.0.0.1:8090/auth/callback',
      scope: 'openid email profile',
      code_challenge: createHash('sha256').update(flow.codeVerifier).digest('base64url'),
      code_challenge_method: 'S256',
      state: flow.state,
      nonce: flow.nonce,
    });
    expect(flow.returnTo).toBe('/acme/settings');
    expect(flow.codeVerifier.length).toBeGreaterThanOrEqual(43);
    const second = await rp.begin('/');
    expect(second.flow.state).not.toBe(flow.state);
    expect(second.flow.nonce).not.toBe(flow.nonce);
    expect(second.flow.codeVerifier).not.toBe(flow.codeVerifier);
  });

  it('refuses a callback whose state is not the flow’s, before any request to the provider', async () => {
    const rp = configured();
    const { flow } = await rp.begin('/');
    const callback = new URL(`http://127.0.0.1:8090/auth/callback?code=abc&state=${flow.state}x`);
    await expect(rp.finish(callback, flow)).rejects.toBeInstanceOf(SignInRefused);
    const noState = new URL('http://127.0.0.1:8090/auth/callback?code=abc');
    await expect(rp.finish(noState, flow)).rejects.toBeInstanceOf(SignInRefused);
  });

  it('reports the provider’s own error parameter', async () => {
    const rp = configured();
    const { flow } = await rp.begin('/');
    const refused = await rp.finish(new URL(`http://127.0.0.1:8090/auth/callback?error=access_denied&state=${flow.state}`), flow).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(SignInRefused);
    expect((refused as SignInRefused).providerError).toBe('access_denied');
  });

  it('a token endpoint that cannot be reached is "unavailable", not a refusal', async () => {
    const rp = configured();
    const { flow } = await rp.begin('/');
    const callback = new URL(`http://127.0.0.1:8090/auth/callback?code=abc&state=${flow.state}`);
    await expect(rp.finish(callback, flow)).rejects.toBeInstanceOf(ProviderUnavailable);
  });

  it('discovers once; after a failure, tries again only after a pause', async () => {
    let calls = 0;
    const rp = relyingParty(async () => {
      calls += 1;
      throw new TypeError('fetch failed');
    });
    await expect(rp.begin('/')).rejects.toBeInstanceOf(ProviderUnavailable);
    await expect(rp.begin('/')).rejects.toBeInstanceOf(ProviderUnavailable);
    expect(calls).toBe(1);
  });

  it('discovers the real way against an issuer that is down: unavailable', async () => {
    const rp = new RelyingParty({
      issuer: new URL(issuer),
      clientId: 'tws-web',
      clientSecret: 'secret',
      clientAuthMethod: 'client_secret_post',
      redirectUri: 'http://127.0.0.1:8090/auth/callback',
      timeoutMs: 2_000,
      logger,
    });
    await expect(rp.begin('/')).rejects.toBeInstanceOf(ProviderUnavailable);
  });
});
