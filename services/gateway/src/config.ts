import { z } from 'zod';
import { buildInfoEnv, ConfigError, env, parseConfig } from '@tws/common';

/**
 * JWS algorithms a Bearer token may be signed with. Asymmetric only: `none` and the HMAC family
 * (HS256…) are refused, because a shared secret would let anyone holding it mint tokens and
 * algorithm-confusion attacks rely on them.
 */
export const jwtAlgorithms = [
  'EdDSA',
  'Ed25519',
  'RS256',
  'RS384',
  'RS512',
  'PS256',
  'PS384',
  'PS512',
  'ES256',
  'ES384',
  'ES512',
] as const;
export type JwtAlgorithm = (typeof jwtAlgorithms)[number];

const algorithmList = z
  .string()
  .default('EdDSA,RS256,ES256')
  .transform((value) => value.split(',').map((item) => item.trim()).filter((item) => item.length > 0))
  .pipe(
    z
      .array(
        z.enum(jwtAlgorithms, {
          error: (issue) =>
            `unsupported algorithm ${JSON.stringify(issue.input)} (allowed: ${jwtAlgorithms.join(', ')}; never none or HS*)`,
        }),
      )
      .min(1, 'name at least one algorithm'),
  );

/** Optional text: unset and blank both mean "not configured". */
const optionalText = () =>
  z
    .string()
    .optional()
    .transform((value) => (value === undefined || value.trim() === '' ? undefined : value));

/**
 * A PEM given through the environment; `\n` escapes (common when a PEM is squeezed into one line
 * of a .env file or a Helm value) are turned back into line breaks.
 */
const optionalPem = () =>
  optionalText()
    .transform((value) => value?.replace(/\\n/g, '\n').trim())
    .refine((value) => value === undefined || /-----BEGIN PUBLIC KEY-----/.test(value), {
      message: 'must be a PEM "PUBLIC KEY" (SPKI)',
    });

/** An optional http(s) base URL without query, fragment or credentials; a trailing slash is dropped. */
const optionalBaseUrl = (example: string) =>
  optionalText().pipe(
    z
      .url({ protocol: /^https?$/, error: `must be an http(s) URL such as ${example}` })
      .refine((value) => {
        const url = URL.parse(value);
        return url === null || (url.search === '' && url.hash === '' && url.username === '' && url.password === '');
      }, 'must be a base URL without query, fragment or credentials')
      .transform((value) => value.replace(/\/+$/, ''))
      .optional(),
  );

/**
 * The only place the gateway reads its environment.
 *
 * Rate limiting: a per-credential token bucket, as DESIGN.md decides (`domain/rate-limit/`, README
 * "Rate limits"). `@fastify/rate-limit` was not used: it counts in fixed windows, which lets a client
 * send twice the limit across a window edge and then blocks it until the window resets, instead of
 * refilling smoothly. The buckets are kept per replica and synchronised across replicas.
 */
export function loadConfig(source: NodeJS.ProcessEnv = process.env) {
  const config = parseConfig(
    {
      LOG_LEVEL: env.logLevel(),
      HOST: env.host(),
      PORT: env.port(8080),
      ...buildInfoEnv,
      BODY_LIMIT_BYTES: env.count(1024 * 1024),
      TRUST_PROXY: env.bool(false),
      TASKS_GRPC_TARGET: env.grpcTarget('127.0.0.1:50051'),
      ATTACHMENTS_GRPC_TARGET: env.grpcTarget('127.0.0.1:50052'),
      WEBHOOKS_GRPC_TARGET: env.grpcTarget('127.0.0.1:50053'),
      GRPC_DEADLINE_MS: env.durationMs(10_000),
      /**
       * Public base of the URLs the API hands out (permanent attachment URLs), e.g.
       * https://api.example.com. Required: never taken from a request's Host or X-Forwarded-* headers,
       * which any client can forge. The local stack sets it to the gateway's own address.
       */
      PUBLIC_BASE_URL: optionalText().pipe(
        z
          .url({ protocol: /^https?$/, error: 'must be an http(s) URL such as https://api.example.com' })
          .refine((value) => {
            const url = URL.parse(value);
            return url === null || (url.search === '' && url.hash === '' && url.username === '' && url.password === '');
          }, 'must be a base URL without query, fragment or credentials')
          .transform((value) => value.replace(/\/+$/, '')),
      ),

      /**
       * The people-facing app's public origin (its APP_URL, e.g. https://app.example.com): the base of
       * task URLs `{app_url}/{urlId}/task/{taskPrefix}-{number}`, which the MCP server serves as task
       * resources. Optional: without it the MCP server offers no task resources.
       */
      APP_PUBLIC_URL: optionalBaseUrl('https://app.example.com'),
      /**
       * The OAuth 2.0 authorization server (issuer) that grants Bearer tokens for this API, named in the
       * protected-resource metadata (RFC 9728) at /.well-known/oauth-protected-resource. Optional:
       * without it the document lists no authorization server (API keys only for MCP clients).
       */
      OAUTH_AUTHORIZATION_SERVER_URL: optionalBaseUrl('https://app.example.com'),

      /**
       * How long a successful API key lookup is reused at most, while the revocation stream is ready
       * (a revocation evicts it at once; plugins/revocations.ts). 0 = no cache.
       */
      AUTH_API_KEY_CACHE_TTL_MS: env.durationMs(5_000),
      /** How long a confirmed workspace membership of a Bearer user is reused at most (same terms). 0 = no cache. */
      AUTH_MEMBERSHIP_CACHE_TTL_MS: env.durationMs(5_000),
      /**
       * The app's own authorization server (services/web: its APP_URL, e.g. https://app.example.com),
       * trusted next to the external issuer below: tokens with this exact `iss`, `typ` at+jwt (RFC 9068)
       * and `aud` = PUBLIC_BASE_URL, verified with its JWKS. Unset: the app's tokens are not accepted.
       */
      AUTH_APP_ISSUER_URL: optionalBaseUrl('https://app.example.com'),
      /**
       * Where the gateway fetches the app issuer's JWKS (default `{AUTH_APP_ISSUER_URL}/oauth/jwks`), e.g.
       * the web Service's in-cluster address; the keys are cached and refetched when a new `kid` appears.
       */
      AUTH_APP_JWKS_URL: optionalText().pipe(z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' }).optional()),
      /** JWKS of the external token issuer (`https://…/.well-known/jwks.json`); alternative to AUTH_JWT_PUBLIC_KEY. */
      AUTH_JWT_JWKS_URL: optionalText().pipe(z.url({ protocol: /^https?$/ }).optional()),
      /** One public key (SPKI PEM) that signs Bearer tokens; alternative to AUTH_JWT_JWKS_URL. */
      AUTH_JWT_PUBLIC_KEY: optionalPem(),
      /** Accepted JWS algorithms, comma-separated; asymmetric only. */
      AUTH_JWT_ALGORITHMS: algorithmList,
      /** Required `iss` of Bearer tokens (required when a key source is set). */
      AUTH_JWT_ISSUER: optionalText(),
      /** Accepted `aud` values, comma-separated (required when a key source is set). */
      AUTH_JWT_AUDIENCE: optionalText().transform((value) =>
        value === undefined ? undefined : value.split(',').map((item) => item.trim()).filter((item) => item.length > 0),
      ),
      /** Clock skew tolerated when checking `exp` and `nbf`. */
      AUTH_JWT_CLOCK_TOLERANCE_SECONDS: z.coerce.number().int().min(0).max(300).default(5),

      /** Sustained requests per second per credential (API key, or user + workspace; client IP when unauthenticated). 0 = no limit. */
      RATE_LIMIT_PER_SECOND: z.coerce.number().min(0).default(50),
      /** Bucket size: requests a credential may send at once after being idle (≥ 1; RATE_LIMIT_PER_SECOND=0 is the "no limit" switch). */
      RATE_LIMIT_BURST: z.coerce
        .number()
        .int()
        .min(1, 'must be at least 1 (to turn the rate limit off, set RATE_LIMIT_PER_SECOND=0)')
        .default(200),
      /**
       * How often this replica sends its per-key usage to the tasks service and takes back the buckets
       * every replica shares (tasks.v1.RateLimitService); 0 = no sharing (each replica limits alone).
       */
      RATE_LIMIT_SYNC_INTERVAL_MS: z.coerce
        .number()
        .int()
        .refine((value) => value === 0 || (value >= 100 && value <= 10_000), 'must be 0 (no sharing) or between 100 and 10000')
        .default(500),
      /** Keys one sync sends at most (the rest wait for the next one); the tasks service accepts up to 10000. */
      RATE_LIMIT_SYNC_MAX_KEYS: z.coerce.number().int().min(1).max(10_000).default(5_000),
      /** Failed authentications (bad API key or token) allowed per client IP per minute before 429. 0 = no limit. */
      AUTH_FAILURES_PER_MINUTE: z.coerce.number().int().min(0).default(30),

      /** Share of requests written as `access` log lines, 0..1 (every 5xx and every slow request is written anyway). */
      ACCESS_LOG_SAMPLE_RATIO: z.coerce.number().min(0).max(1).default(0.01),
      /** A request slower than this (ms) is always written as an `access` line. */
      ACCESS_LOG_SLOW_MS: env.durationMs(1_000),
    },
    source,
  );
  const problems: string[] = [];
  if (config.AUTH_JWT_JWKS_URL && config.AUTH_JWT_PUBLIC_KEY) {
    problems.push('AUTH_JWT_JWKS_URL, AUTH_JWT_PUBLIC_KEY: set only one of them');
  }
  if (config.AUTH_JWT_JWKS_URL || config.AUTH_JWT_PUBLIC_KEY) {
    if (!config.AUTH_JWT_ISSUER) problems.push('AUTH_JWT_ISSUER: is required when Bearer tokens are enabled');
    if (!config.AUTH_JWT_AUDIENCE?.length) problems.push('AUTH_JWT_AUDIENCE: is required when Bearer tokens are enabled');
  }
  if (config.AUTH_APP_JWKS_URL && !config.AUTH_APP_ISSUER_URL) {
    problems.push('AUTH_APP_JWKS_URL: is set but AUTH_APP_ISSUER_URL is not (set the app issuer, or unset its JWKS URL)');
  }
  if (config.AUTH_APP_ISSUER_URL && config.AUTH_JWT_ISSUER && config.AUTH_JWT_ISSUER.replace(/\/+$/, '') === config.AUTH_APP_ISSUER_URL) {
    problems.push('AUTH_JWT_ISSUER: names the app issuer (AUTH_APP_ISSUER_URL); the external issuer must be another one');
  }
  if (problems.length > 0) throw new ConfigError(`Invalid configuration: ${problems.join('; ')}`);
  return config;
}

export type GatewayConfig = ReturnType<typeof loadConfig>;
