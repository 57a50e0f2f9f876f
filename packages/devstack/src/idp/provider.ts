import { createHash, timingSafeEqual } from 'node:crypto';
import Provider, { type Account, type Configuration, type KoaContextWithOIDC } from 'oidc-provider';
import type { IdpConfig, IdpUser } from './config.js';
import { errorPage, pageCsp } from './pages.js';

/** The scopes this provider knows, and the claims each one releases. */
export const idpScopes = ['openid', 'email', 'profile'] as const;
const scopeClaims = { email: ['email', 'email_verified'], profile: ['name'] };

/** A user's `sub`: stable for an email, opaque, the same in every run. */
export function subjectOf(email: string): string {
  return createHash('sha256').update(`tws-dev-idp:${email.toLowerCase()}`).digest('base64url').slice(0, 24);
}

/** The users by email (lower case) and by `sub`; passwords are compared in constant time. */
export class DevUsers {
  readonly #byEmail = new Map<string, IdpUser>();
  readonly #bySub = new Map<string, IdpUser>();

  constructor(users: readonly IdpUser[]) {
    for (const user of users) {
      this.#byEmail.set(user.email.toLowerCase(), user);
      this.#bySub.set(subjectOf(user.email), user);
    }
  }

  subjectOf(user: IdpUser): string {
    return subjectOf(user.email);
  }

  bySubject(sub: string): IdpUser | undefined {
    return this.#bySub.get(sub);
  }

  /** The user whose email and password these are, else undefined (the same work either way). */
  authenticate(email: string, password: string): IdpUser | undefined {
    const user = this.#byEmail.get(email.trim().toLowerCase());
    const digest = (value: string): Buffer => createHash('sha256').update(value).digest();
    const matches = timingSafeEqual(digest(password), digest(user?.password ?? `\0no such user\0${password}`));
    return user && matches ? user : undefined;
  }
}

function account(user: IdpUser): Account {
  return {
    accountId: subjectOf(user.email),
    claims: () => ({ sub: subjectOf(user.email), email: user.email, email_verified: true, name: user.name }),
  };
}

/**
 * The configured client is first-party (the app itself): its consent is granted without asking,
 * for the scopes this provider knows. A grant the session already holds is reused.
 */
async function loadExistingGrant(ctx: KoaContextWithOIDC, firstParty: ReadonlySet<string>) {
  const { client, session, provider } = ctx.oidc;
  if (!client || !session?.accountId) return undefined;
  const grantId = ctx.oidc.result?.consent?.grantId ?? session.grantIdFor(client.clientId);
  if (grantId) return provider.Grant.find(grantId);
  if (!firstParty.has(client.clientId)) return undefined;
  const grant = new provider.Grant({ clientId: client.clientId, accountId: session.accountId });
  grant.addOIDCScope(idpScopes.join(' '));
  await grant.save();
  return grant;
}

export function redirectOrigins(config: IdpConfig): string[] {
  return [...config.client.redirectUris, ...config.client.postLogoutRedirectUris].map((uri) => new URL(uri).origin);
}

/** The oidc-provider instance: authorization code + PKCE (S256, required) for one confidential client. */
export function buildProvider(config: IdpConfig, users: DevUsers): Provider {
  const csp = pageCsp(redirectOrigins(config));
  const { client } = config;
  const hasRedirects = client.redirectUris.length > 0;
  const configuration: Configuration = {
    clients: [
      {
        client_id: client.clientId,
        client_secret: client.clientSecret,
        client_name: 'Task Workspace',
        // Without a redirect URI there is nothing to send a code to: the client then exists but cannot sign in.
        redirect_uris: client.redirectUris,
        post_logout_redirect_uris: client.postLogoutRedirectUris,
        grant_types: hasRedirects ? ['authorization_code'] : [],
        response_types: hasRedirects ? ['code'] : [],
        token_endpoint_auth_method: client.tokenEndpointAuthMethod,
      },
    ],
    clientAuthMethods: ['client_secret_basic', 'client_secret_post'],
    responseTypes: ['code'],
    // Every request must carry a code_challenge; oidc-provider 9 knows only S256, so `plain` is refused.
    pkce: { required: () => true },
    scopes: [...idpScopes],
    claims: { openid: ['sub'], ...scopeClaims },
    // email, email_verified and name go into the ID token too, not only into userinfo.
    conformIdTokenClaims: false,
    allowOmittingSingleRegisteredRedirectUri: false,
    findAccount: (_ctx, sub) => {
      const user = users.bySubject(sub);
      return user ? account(user) : undefined;
    },
    loadExistingGrant: (ctx) => loadExistingGrant(ctx, new Set([client.clientId])),
    interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
    features: {
      devInteractions: { enabled: false },
      userinfo: { enabled: true },
      rpInitiatedLogout: { enabled: true },
      revocation: { enabled: false },
      introspection: { enabled: false },
      registration: { enabled: false },
      pushedAuthorizationRequests: { enabled: false },
    },
    cookies: {
      // The app may run on the same host (127.0.0.1, another port): cookies are per host, not per
      // port, so these names must not be ones an app would pick.
      names: { session: 'tws_idp_session', interaction: 'tws_idp_interaction', resume: 'tws_idp_resume' },
      keys: config.cookieKeys,
      long: { httpOnly: true, sameSite: 'lax' },
      short: { httpOnly: true, sameSite: 'lax' },
    },
    jwks: config.jwks as Configuration['jwks'],
    ttl: {
      AuthorizationCode: 60,
      IdToken: 3600,
      AccessToken: 3600,
      Interaction: 600,
      Session: config.sessionTtlSeconds,
      Grant: config.sessionTtlSeconds,
    },
    renderError: (ctx, out) => {
      ctx.type = 'html';
      ctx.set('content-security-policy', csp);
      ctx.body = errorPage(
        'Sign-in cannot continue',
        `${out.error_description ?? out.error}. Go back to the app and start signing in again.`,
      );
    },
  };
  return new Provider(config.issuer, configuration);
}
