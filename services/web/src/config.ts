import { z } from 'zod';
import { buildInfoEnv, ConfigError, env, parseConfig } from '@tws/common';

/** True for 127.0.0.0/8, ::1 and localhost: the only hosts plain http is accepted for. */
export function isLoopbackHost(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, '').toLowerCase();
  return host === 'localhost' || host === '::1' || /^127(\.\d{1,3}){3}$/.test(host);
}

/**
 * An http(s) URL that is https unless its host is a loopback address (a developer's machine): a
 * session cookie or a client secret must never travel in clear text over a network.
 */
const secureUrl = (example: string) =>
  z
    .url({ protocol: /^https?$/, error: `must be an http(s) URL such as ${example}` })
    // (zod runs every check: a value that is no URL at all is reported by z.url alone.)
    .refine((value) => {
      const url = URL.parse(value);
      return url === null || url.protocol === 'https:' || isLoopbackHost(url.hostname);
    }, `must be https (plain http is accepted only for a loopback host such as http://127.0.0.1); e.g. ${example}`)
    .refine((value) => {
      const url = URL.parse(value);
      return url === null || (url.search === '' && url.hash === '' && url.username === '' && url.password === '');
    }, 'must have no query, fragment or credentials');

/** One private signing key of the authorization server (a JWK with its private part). */
const privateJwk = z
  .looseObject({
    kty: z.enum(['EC', 'OKP', 'RSA']),
    // A public key (no "d") cannot sign: `OAUTH_SIGNING_KEYS.keys.0.d: is required`.
    d: z.string().min(16, 'must be the private part of the key'),
    kid: z.string().min(1).max(200).optional(),
    alg: z.string().max(20).optional(),
    crv: z.string().optional(),
    n: z.string().optional(),
  })
  .refine((jwk) => jwk.kty !== 'EC' || jwk.crv === 'P-256', 'EC keys must be on the P-256 curve (ES256)')
  .refine((jwk) => jwk.kty !== 'OKP' || jwk.crv === 'Ed25519', 'OKP keys must be Ed25519 (EdDSA)')
  .refine((jwk) => jwk.kty !== 'RSA' || (jwk.n?.length ?? 0) >= 342, 'RSA keys must have at least 2048 bits')
  .refine((jwk) => jwk.alg === undefined || jwk.alg === signingAlgorithm(jwk), 'a key\'s "alg", when given, must be ES256 (EC P-256), EdDSA (Ed25519) or RS256 (RSA)');

const oauthSigningKeys = z
  .string()
  .transform((value, context) => {
    try {
      return JSON.parse(value) as unknown;
    } catch {
      context.addIssue({ code: 'custom', message: 'must be a JWKS JSON document such as {"keys":[{…private JWK…}]}' });
      return z.NEVER;
    }
  })
  .pipe(z.object({ keys: z.array(privateJwk).min(1, 'must hold at least one key').max(5, 'must hold at most 5 keys') }));

/** The JWS algorithm a signing key signs with. */
export function signingAlgorithm(jwk: { kty: 'EC' | 'OKP' | 'RSA' }): 'ES256' | 'EdDSA' | 'RS256' {
  return jwk.kty === 'EC' ? 'ES256' : jwk.kty === 'OKP' ? 'EdDSA' : 'RS256';
}

const seconds = (fallback: number, minimum: number) => z.coerce.number().int().min(minimum).max(31 * 24 * 3600).default(fallback);

/**
 * The only place the web service reads its environment. Ports follow the backends: PORT serves the
 * pages (behind the public ingress), OPS_PORT the probes and /metrics (never exposed publicly).
 */
export function loadConfig(source: NodeJS.ProcessEnv = process.env) {
  const config = parseConfig(
    {
      LOG_LEVEL: env.logLevel(),
      HOST: env.host(),
      PORT: env.port(8090),
      ...buildInfoEnv,
      OPS_PORT: env.port(9090),
      /** Take the client IP from X-Forwarded-For (behind an ingress): the sign-in rate limit is per client IP. */
      TRUST_PROXY: env.bool(false),
      /** Largest form body accepted (every form here is a few fields). */
      BODY_LIMIT_BYTES: env.count(16 * 1024),
      /**
       * Public base URL of the app, e.g. https://app.example.com: the origin every form post must
       * come from (CSRF), the base of the OIDC redirect URI `<APP_URL>/auth/callback`, and https
       * decides the cookies' Secure flag and `__Host-` prefix. Never taken from a request's headers.
       */
      APP_URL: secureUrl('https://app.example.com')
        .refine((value) => [null, '/'].includes(URL.parse(value)?.pathname ?? null), 'must be an origin without a path, such as https://app.example.com')
        .transform((value) => new URL(value).origin),
      /** The OpenID provider's issuer identifier (its discovery document is `<issuer>/.well-known/openid-configuration`). */
      OIDC_ISSUER_URL: secureUrl('https://login.example.com/realms/acme'),
      OIDC_CLIENT_ID: env.text(),
      OIDC_CLIENT_SECRET: env.text(),
      /** How the client authenticates at the provider's token endpoint, as registered there. */
      OIDC_CLIENT_AUTH_METHOD: z.enum(['client_secret_basic', 'client_secret_post']).default('client_secret_basic'),
      /** Bound of each call to the provider (discovery, token exchange). */
      OIDC_HTTP_TIMEOUT_MS: z.coerce.number().int().min(100).max(60_000).default(10_000),
      /** How long a started sign-in may take at the provider before its state is forgotten. */
      SIGN_IN_FLOW_TIMEOUT_S: seconds(600, 30),
      /** Keys the cookies' encryption (the sign-in flow cookie) and CSRF tokens; at least 32 bytes of secret. */
      SESSION_SECRET: z
        .string()
        .refine((value) => Buffer.byteLength(value, 'utf8') >= 32, 'must be at least 32 bytes (e.g. openssl rand -base64 32)'),
      /** A session unused this long ends. */
      SESSION_IDLE_TIMEOUT_S: seconds(1800, 60),
      /** A session ends this long after sign-in, however active. */
      SESSION_ABSOLUTE_TIMEOUT_S: seconds(43_200, 60),
      /** How often ended sessions are deleted (0: never, e.g. when another replica sweeps). */
      SESSION_SWEEP_INTERVAL_MS: z.coerce.number().int().min(0).default(300_000),
      /** Sign-in attempts (each of /auth/sign-in and /auth/callback) per client IP per minute. 0 = no limit. */
      SIGN_IN_RATE_LIMIT_PER_MINUTE: z.coerce.number().int().min(0).default(20),
      DATABASE_URL: env.url(),
      DATABASE_POOL_SIZE: env.count(10),
      TASKS_GRPC_TARGET: env.grpcTarget('127.0.0.1:50051'),
      /** The webhooks service (the webhooks settings); not a readiness dependency: only those pages need it. */
      WEBHOOKS_GRPC_TARGET: env.grpcTarget('127.0.0.1:50053'),
      /** The attachments service (the task page lists a task's attachments). */
      ATTACHMENTS_GRPC_TARGET: env.grpcTarget('127.0.0.1:50052'),
      /**
       * The API's public base URL (`{base_url}`: the gateway's PUBLIC_BASE_URL, e.g.
       * https://api.example.com): the task page links each attachment to its permanent download URL
       * `<API_PUBLIC_BASE_URL>/v1/attachments/<id>/content?token=…`, built as the gateway builds it.
       */
      API_PUBLIC_BASE_URL: z
        .url({ protocol: /^https?$/, error: 'must be an http(s) URL such as https://api.example.com' })
        .refine((value) => {
          const url = URL.parse(value);
          return url === null || (url.search === '' && url.hash === '' && url.username === '' && url.password === '');
        }, 'must be a base URL without query, fragment or credentials')
        .transform((value) => value.replace(/\/+$/, '')),
      /**
       * The OAuth 2.0 authorization server's signing keys: a JWKS of PRIVATE keys (EC P-256 → ES256,
       * OKP Ed25519 → EdDSA, RSA ≥ 2048 bits → RS256), e.g. {"keys":[{"kty":"EC","crv":"P-256",…,"d":…}]}.
       * The first key signs; the others stay published at the JWKS until removed (rotation: put the
       * new key first, remove the old one once its last access token expired, 1 h later).
       */
      OAUTH_SIGNING_KEYS: oauthSigningKeys,
      /** Dynamic client registrations (RFC 7591) per client IP per minute. 0 = no limit. */
      OAUTH_REGISTRATION_RATE_LIMIT_PER_MINUTE: z.coerce.number().int().min(0).default(10),
      GRPC_DEADLINE_MS: env.durationMs(5_000),
      /**
       * Bound of revoking an API key: the tasks service answers once every gateway replica dropped
       * the key (at most its confirmation wait, 6 s by default), so this is longer than GRPC_DEADLINE_MS.
       */
      REVOKE_DEADLINE_MS: env.durationMs(20_000),
    },
    source,
  );
  if (config.SESSION_ABSOLUTE_TIMEOUT_S < config.SESSION_IDLE_TIMEOUT_S) {
    throw new ConfigError(
      `Invalid configuration: SESSION_ABSOLUTE_TIMEOUT_S: must not be shorter than SESSION_IDLE_TIMEOUT_S (${config.SESSION_IDLE_TIMEOUT_S})`,
    );
  }
  return { ...config, APP_SECURE: config.APP_URL.startsWith('https:') };
}

export type WebConfig = ReturnType<typeof loadConfig>;
