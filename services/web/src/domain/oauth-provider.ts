import { hkdfSync } from 'node:crypto';
import Provider, { errors, interactionPolicy, type Configuration, type KoaContextWithOIDC } from 'oidc-provider';
import { signingAlgorithm, type WebConfig } from '../config.js';

/** Where the authorization server's endpoints are (the issuer is APP_URL itself, see plugins/oauth.ts). */
export const oauthRoutes = {
  authorization: '/oauth/authorize',
  token: '/oauth/token',
  registration: '/oauth/register',
  revocation: '/oauth/revoke',
  jwks: '/oauth/jwks',
  userinfo: '/oauth/userinfo',
  end_session: '/oauth/end-session',
  introspection: '/oauth/introspect',
  device_authorization: '/oauth/device/auth',
  code_verification: '/oauth/device',
  pushed_authorization_request: '/oauth/par',
  backchannel_authentication: '/oauth/backchannel',
  challenge: '/oauth/challenge',
} as const;

/** The scopes of the API (`{base_url}`): `read` allows GET only, `write` every method (contract §5). */
export const apiScopes = ['read', 'write'] as const;

/** Lifetimes, seconds. Access tokens live 1 h (so a removed signing key may go 1 h after it stopped signing). */
export const oauthTtl = {
  AccessToken: 3600,
  AuthorizationCode: 60,
  IdToken: 3600,
  RefreshToken: 30 * 86_400,
  Grant: 30 * 86_400,
  Interaction: 3600,
  Session: 14 * 86_400,
} as const;

/** The audience of every access token: the API's base URL, for any resource indicator at or under it (e.g. `{base_url}/mcp`). */
export function audienceOf(resource: string, baseUrl: string): string | undefined {
  return resource === baseUrl || resource === `${baseUrl}/` || resource.startsWith(`${baseUrl}/`) ? baseUrl : undefined;
}

/**
 * oidc-provider's default prompts, with one more login check: every authorization request goes
 * through the app's interaction (api/oauth-interactions.ts), which asks the app's session who the
 * person is. Without it, the provider's own session cookie would let a browser whose person signed
 * out of the app (or another person signed in) get codes silently for the previous person.
 */
export function interactionPolicyFollowingTheAppSession(): interactionPolicy.Prompt[] {
  const policy = interactionPolicy.base();
  const login = policy.get('login')!;
  login.checks.add(
    new interactionPolicy.Check('app_session', 'the app session decides who the person is', (ctx) =>
      ctx.oidc.result?.login ? interactionPolicy.Check.NO_NEED_TO_PROMPT : interactionPolicy.Check.REQUEST_PROMPT,
    ),
    0,
  );
  return policy;
}

export interface OAuthProviderOptions {
  config: WebConfig;
  adapter: Configuration['adapter'];
  /** The error page for errors the provider shows in the browser (no valid redirect URI to return them to). */
  renderError: (ctx: KoaContextWithOIDC, title: string, message: string) => void;
}

/**
 * The service's own OAuth 2.0 authorization server (oidc-provider): authorization code + PKCE
 * (S256 only; no implicit, no password grant), dynamic registration of public clients, JWT access
 * tokens (RFC 9068) for the API with `aud` = `{base_url}`, rotating refresh tokens, RFC 7009
 * revocation. The person (`sub`) is their users.id at the tasks service, set by the interactions
 * (api/oauth-interactions.ts) from the app's own session.
 */
export function buildOAuthProvider(options: OAuthProviderOptions): Provider {
  const { config } = options;
  const baseUrl = config.API_PUBLIC_BASE_URL;
  const signingKeys = config.OAUTH_SIGNING_KEYS.keys;
  const alg = signingAlgorithm(signingKeys[0]!);
  const cookieKey = Buffer.from(hkdfSync('sha256', Buffer.from(config.SESSION_SECRET, 'utf8'), Buffer.alloc(0), 'tws-web oauth cookies v1', 32)).toString('base64url');
  const cookieOptions = { httpOnly: true, sameSite: 'lax', secure: config.APP_SECURE } as const;
  const configuration: Configuration = {
    adapter: options.adapter,
    clients: [],
    // Public clients only (RFC 7591 registration of native and browser apps): no secrets to keep.
    clientAuthMethods: ['none'],
    clientDefaults: {
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
      id_token_signed_response_alg: alg,
    },
    responseTypes: ['code'],
    pkce: { required: () => true },
    scopes: ['openid', 'offline_access'],
    claims: { openid: ['sub'] },
    routes: oauthRoutes,
    allowOmittingSingleRegisteredRedirectUri: false,
    // Browser-based public clients may call the token and revocation endpoints from their redirect URIs' origins only.
    clientBasedCORS: (_ctx, origin, client) => origin !== 'null' && (client.redirectUris ?? []).some((uri) => URL.parse(uri)?.origin === origin),
    interactions: { policy: interactionPolicyFollowingTheAppSession(), url: (_ctx, interaction) => `/oauth/interaction/${interaction.uid}` },
    findAccount: (_ctx, sub) => ({ accountId: sub, claims: () => ({ sub }) }),
    // Every client allowed the refresh_token grant gets a refresh token, rotated at every use; a
    // rotated one presented again revokes the whole grant (oidc-provider's refresh_token grant).
    issueRefreshToken: (_ctx, client) => client.grantTypeAllowed('refresh_token'),
    rotateRefreshToken: true,
    // The grant id travels in the access token, so a resource server can refuse the tokens of a
    // revoked grant (web.oauth_revoked_grants) before they expire.
    extraTokenClaims: (_ctx, token) => (token.kind === 'AccessToken' ? { grant_id: token.grantId } : undefined),
    features: {
      devInteractions: { enabled: false },
      registration: { enabled: true, initialAccessToken: false, issueRegistrationAccessToken: false },
      // A client revokes only its own tokens (another's: answered 200 and ignored, RFC 7009 §2.2).
      revocation: { enabled: true, allowedPolicy: (_ctx, client, token) => token.clientId === client.clientId },
      userinfo: { enabled: false },
      rpInitiatedLogout: { enabled: false },
      introspection: { enabled: false },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => baseUrl,
        useGrantedResource: () => true,
        getResourceServerInfo: (_ctx, resource) => {
          const audience = audienceOf(resource, baseUrl);
          if (!audience) throw new errors.InvalidTarget(`the only resource is ${baseUrl} (or an address under it)`);
          return {
            scope: apiScopes.join(' '),
            audience,
            accessTokenTTL: oauthTtl.AccessToken,
            accessTokenFormat: 'jwt',
            jwt: { sign: { alg } },
          };
        },
      },
    },
    cookies: {
      names: { session: 'tws_oauth_session', interaction: 'tws_oauth_interaction', resume: 'tws_oauth_resume' },
      keys: [cookieKey],
      long: cookieOptions,
      short: cookieOptions,
    },
    // Every key with its `alg` and `use`, so oidc-provider's key selection scores them alike and
    // keeps their order: the first key of its algorithm signs, the others are only published.
    jwks: { keys: signingKeys.map((key) => ({ ...key, alg: signingAlgorithm(key), use: 'sig' })) as NonNullable<Configuration['jwks']>['keys'] },
    ttl: { ...oauthTtl },
    renderError: (ctx, out) => {
      options.renderError(ctx, 'Authorization refused', `${out.error_description ?? out.error}. Go back to the app that sent you here and try connecting again.`);
    },
  };
  const provider = new Provider(config.APP_URL, configuration);
  // plugins/oauth.ts sets Host and X-Forwarded-Proto from APP_URL on every request it hands over.
  provider.proxy = true;
  return provider;
}
