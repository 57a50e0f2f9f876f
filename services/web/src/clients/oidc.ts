import * as client from 'openid-client';
import type { Logger } from '@tws/common';
import { isLoopbackHost } from '../config.js';

/** What the callback must get back to finish a sign-in; sealed in a short-lived cookie meanwhile. */
export interface SignInFlow {
  state: string;
  nonce: string;
  codeVerifier: string;
  returnTo: string;
}

/** What the provider says about the person, from the ID token. */
export interface VerifiedIdentity {
  subject: string;
  email: string | undefined;
  emailVerified: boolean;
}

/** The provider could not be reached or answered something unusable (discovery, token endpoint). */
export class ProviderUnavailable extends Error {
  override readonly name = 'ProviderUnavailable';
}

/** The authorization response or the code exchange was refused (state, nonce, PKCE, an error from the provider). */
export class SignInRefused extends Error {
  override readonly name = 'SignInRefused';
  constructor(
    message: string,
    /** The provider's `error` parameter, when it sent one (e.g. access_denied). */
    readonly providerError?: string,
  ) {
    super(message);
  }
}

export interface RelyingPartyOptions {
  issuer: URL;
  clientId: string;
  clientSecret: string;
  /** How the client authenticates at the token endpoint (registered with the provider). */
  clientAuthMethod: 'client_secret_basic' | 'client_secret_post';
  redirectUri: string;
  timeoutMs: number;
  logger: Logger;
  /** Finds the provider's configuration; by default OpenID Connect discovery of `issuer`. */
  discover?: () => Promise<client.Configuration>;
}

/** After a failed discovery, the next sign-in tries again no sooner than this. */
const rediscoveryDelayMs = 5_000;

/**
 * This app as an OpenID Connect relying party (openid-client): authorization code flow with PKCE
 * (S256), state and nonce, as a confidential client (OIDC_CLIENT_AUTH_METHOD).
 * The provider's configuration is discovered at the first sign-in, not at start-up, so the app is
 * ready and its pages served while the provider is down; a failure is retried after 5 s.
 */
export class RelyingParty {
  private configuration: Promise<client.Configuration> | undefined;
  private failedAt = 0;

  constructor(private readonly options: RelyingPartyOptions) {}

  private discover(): Promise<client.Configuration> {
    const { issuer, clientId, clientSecret, clientAuthMethod, timeoutMs } = this.options;
    // Plain http only for a loopback issuer (a provider on the developer's machine); config.ts
    // already refuses any other http issuer.
    const insecure = issuer.protocol === 'http:' && isLoopbackHost(issuer.hostname);
    const auth = clientAuthMethod === 'client_secret_post' ? client.ClientSecretPost(clientSecret) : client.ClientSecretBasic(clientSecret);
    return client.discovery(issuer, clientId, undefined, auth, {
      timeout: Math.ceil(timeoutMs / 1000),
      ...(insecure ? { execute: [client.allowInsecureRequests] } : {}),
    });
  }

  private async config(): Promise<client.Configuration> {
    if (!this.configuration) {
      if (Date.now() - this.failedAt < rediscoveryDelayMs) throw new ProviderUnavailable('discovery failed moments ago');
      const discovering = (this.options.discover ?? (() => this.discover()))();
      this.configuration = discovering;
      discovering.catch((error: unknown) => {
        this.options.logger.warn({ err: error, issuer: this.options.issuer.href }, 'OpenID provider discovery failed');
        this.failedAt = Date.now();
        this.configuration = undefined;
      });
    }
    try {
      return await this.configuration;
    } catch (error) {
      throw new ProviderUnavailable(`discovery of ${this.options.issuer.href} failed`, { cause: error });
    }
  }

  /** The provider's authorization URL for a new sign-in, and the flow to keep until the callback. */
  async begin(returnTo: string): Promise<{ url: URL; flow: SignInFlow }> {
    const config = await this.config();
    const flow: SignInFlow = { state: client.randomState(), nonce: client.randomNonce(), codeVerifier: client.randomPKCECodeVerifier(), returnTo };
    const url = client.buildAuthorizationUrl(config, {
      redirect_uri: this.options.redirectUri,
      scope: 'openid email profile',
      code_challenge: await client.calculatePKCECodeChallenge(flow.codeVerifier),
      code_challenge_method: 'S256',
      state: flow.state,
      nonce: flow.nonce,
    });
    return { url, flow };
  }

  /**
   * Checks the authorization response against the flow (state, then the code exchange with the
   * PKCE verifier, then the ID token's nonce, issuer, audience and expiry) and answers the identity
   * (email and email_verified from the ID token, or from UserInfo when the ID token has no email).
   */
  async finish(callbackUrl: URL, flow: SignInFlow): Promise<VerifiedIdentity> {
    const providerError = callbackUrl.searchParams.get('error');
    if (providerError !== null) throw new SignInRefused('the provider answered with an error', providerError.slice(0, 100));
    const config = await this.config();
    let tokens: Awaited<ReturnType<typeof client.authorizationCodeGrant>>;
    try {
      tokens = await client.authorizationCodeGrant(config, callbackUrl, {
        pkceCodeVerifier: flow.codeVerifier,
        expectedState: flow.state,
        expectedNonce: flow.nonce,
        idTokenExpected: true,
      });
    } catch (error) {
      if (isNetworkFailure(error)) throw new ProviderUnavailable('token request failed', { cause: error });
      throw new SignInRefused(error instanceof Error ? error.message : String(error));
    }
    const claims = tokens.claims();
    if (!claims) throw new SignInRefused('no ID token in the token response');
    // Many providers put the scope's claims in the ID token; others (oidc-provider, some Okta and
    // Entra set-ups) only at the UserInfo endpoint, which is then asked with the access token
    // (its `sub` must be the ID token's). Email and email_verified are always taken together.
    const source = typeof claims.email === 'string' ? claims : await this.userInfo(config, tokens.access_token, claims.sub);
    return {
      subject: claims.sub,
      email: typeof source.email === 'string' ? source.email : undefined,
      // Only the JSON boolean true counts (some providers send "true" as a string: not verified here).
      emailVerified: source.email_verified === true,
    };
  }

  private async userInfo(config: client.Configuration, accessToken: string, subject: string): Promise<client.UserInfoResponse> {
    try {
      return await client.fetchUserInfo(config, accessToken, subject);
    } catch (error) {
      if (isNetworkFailure(error)) throw new ProviderUnavailable('userinfo request failed', { cause: error });
      throw new SignInRefused(error instanceof Error ? error.message : String(error));
    }
  }
}

/** A failure to reach the provider (refused, reset, timed out) rather than a refusal by it. */
function isNetworkFailure(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  if (error.name === 'AbortError' || error.name === 'TimeoutError') return true;
  const cause = (error as { cause?: unknown }).cause;
  return error instanceof TypeError || (cause instanceof Error && /ECONN|ETIMEDOUT|ENOTFOUND|EAI_AGAIN|fetch failed/i.test(`${cause.message} ${(cause as { code?: string }).code ?? ''}`));
}
