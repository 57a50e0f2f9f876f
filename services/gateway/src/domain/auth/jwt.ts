import { createHash, createPublicKey } from 'node:crypto';
import {
  createRemoteJWKSet,
  decodeJwt,
  errors as joseErrors,
  importSPKI,
  jwtVerify,
  type CryptoKey,
  type JWTVerifyGetKey,
  type JWTVerifyOptions,
} from 'jose';
import type { GatewayConfig, JwtAlgorithm } from '../../config.js';
import { LookupCache } from './lookup-cache.js';
import { scopesOf, type Scope } from './principal.js';

/** The facts the gateway takes from a verified Bearer token. */
export interface VerifiedToken {
  userId: string;
  scopes: ReadonlySet<Scope>;
  /** The OAuth grant the token was issued under (the app's tokens: the `grant_id` claim), checked against revoked grants. */
  grantId?: string;
}

/** Why a token was refused; `unavailable` means the key source could not be reached (503, not 401). */
export class TokenRejected extends Error {
  constructor(
    message: string,
    readonly unavailable = false,
  ) {
    super(message);
  }
}

export interface TokenVerifier {
  /**
   * `onCacheMiss` runs before a token not verified recently is checked (it may throw to refuse);
   * not when the same token's check is already in flight, which is joined.
   */
  verify(token: string, onCacheMiss?: () => void): Promise<VerifiedToken>;
}

/** Key types each algorithm family can be imported for, from node's `asymmetricKeyType`/curve. */
function algorithmsForKey(pem: string, allowed: readonly JwtAlgorithm[]): JwtAlgorithm[] {
  let key;
  try {
    key = createPublicKey(pem);
  } catch (error) {
    throw new Error(`AUTH_JWT_PUBLIC_KEY: not a usable public key (${error instanceof Error ? error.message : String(error)})`, {
      cause: error,
    });
  }
  const type = key.asymmetricKeyType;
  const curve = key.asymmetricKeyDetails?.namedCurve;
  return allowed.filter((alg) => {
    if (alg === 'EdDSA' || alg === 'Ed25519') return type === 'ed25519';
    if (alg.startsWith('RS')) return type === 'rsa';
    if (alg.startsWith('PS')) return type === 'rsa' || type === 'rsa-pss';
    if (alg === 'ES256') return type === 'ec' && curve === 'prime256v1';
    if (alg === 'ES384') return type === 'ec' && curve === 'secp384r1';
    if (alg === 'ES512') return type === 'ec' && curve === 'secp521r1';
    return false;
  });
}

/**
 * jose's remote JWKS: a fetch bounded to 5 s, keys cached (refetched after 10 min), and a token
 * with an unknown `kid` refetches them, at most every 5 s (so a rotated-in key is picked up within
 * seconds, and tokens with made-up kids cannot make the gateway hammer the issuer).
 */
const remoteJwksOptions = { timeoutDuration: 5_000, cooldownDuration: 5_000, cacheMaxAge: 10 * 60_000 } as const;

/** Tokens longer than this are refused before any parsing (a real access token is well under 2 KiB). */
const maxTokenLength = 8_192;

/** One issuer the gateway trusts: how its keys are found and what its tokens must say. */
interface TrustedIssuer {
  key: JWTVerifyGetKey;
  options: JWTVerifyOptions;
  /** Its tokens name their OAuth grant (`grant_id`), which may be revoked (the app's authorization server). */
  grants: boolean;
}

/** The external issuer of AUTH_JWT_* (a third-party identity provider, or the operator CLI's key). */
async function externalIssuer(config: GatewayConfig): Promise<[string, TrustedIssuer] | undefined> {
  const allowed = config.AUTH_JWT_ALGORITHMS;
  let key: JWTVerifyGetKey;
  let algorithms: string[];
  if (config.AUTH_JWT_JWKS_URL) {
    key = createRemoteJWKSet(new URL(config.AUTH_JWT_JWKS_URL), remoteJwksOptions);
    algorithms = [...allowed];
  } else if (config.AUTH_JWT_PUBLIC_KEY) {
    const pem = config.AUTH_JWT_PUBLIC_KEY;
    const usable = algorithmsForKey(pem, allowed);
    if (usable.length === 0) {
      throw new Error(`AUTH_JWT_PUBLIC_KEY: the key fits none of AUTH_JWT_ALGORITHMS (${allowed.join(', ')})`);
    }
    const keys = new Map<string, CryptoKey>();
    for (const alg of usable) keys.set(alg, await importSPKI(pem, alg));
    key = (header) => {
      const found = header.alg === undefined ? undefined : keys.get(header.alg);
      if (!found) throw new joseErrors.JOSEAlgNotAllowed('"alg" (Algorithm) Header Parameter value not allowed');
      return found;
    };
    algorithms = usable;
  } else {
    return undefined;
  }
  const issuer = config.AUTH_JWT_ISSUER ?? '';
  return [
    issuer,
    {
      key,
      options: {
        algorithms,
        issuer,
        ...(config.AUTH_JWT_AUDIENCE ? { audience: config.AUTH_JWT_AUDIENCE } : {}),
        clockTolerance: config.AUTH_JWT_CLOCK_TOLERANCE_SECONDS,
        requiredClaims: ['sub', 'exp'],
      },
      grants: false,
    },
  ];
}

/**
 * The app's own authorization server (AUTH_APP_ISSUER_URL, services/web): RFC 9068 access tokens,
 * `typ` at+jwt, `aud` = this API's PUBLIC_BASE_URL, keys from its JWKS (rotation: a new `kid` is
 * fetched when it first appears; the old key stays published until its tokens expire).
 */
function appIssuer(config: GatewayConfig): [string, TrustedIssuer] | undefined {
  const issuer = config.AUTH_APP_ISSUER_URL;
  if (!issuer) return undefined;
  const jwksUrl = config.AUTH_APP_JWKS_URL ?? `${issuer}/oauth/jwks`;
  return [
    issuer,
    {
      key: createRemoteJWKSet(new URL(jwksUrl), remoteJwksOptions),
      options: {
        algorithms: [...config.AUTH_JWT_ALGORITHMS],
        issuer,
        audience: config.PUBLIC_BASE_URL,
        typ: 'at+jwt',
        clockTolerance: config.AUTH_JWT_CLOCK_TOLERANCE_SECONDS,
        requiredClaims: ['sub', 'exp', 'iat', 'jti', 'client_id'],
      },
      grants: true,
    },
  ];
}

/**
 * Builds the Bearer token verifier from config, or undefined when no issuer is trusted (then every
 * Bearer token is refused with 401). Trusted: the app's authorization server (AUTH_APP_ISSUER_URL)
 * and the external issuer (AUTH_JWT_JWKS_URL or AUTH_JWT_PUBLIC_KEY with AUTH_JWT_ISSUER). A token
 * is matched to its issuer by its (unverified) `iss` first and then verified with that issuer's keys
 * and rules only; an unknown `iss` is refused without fetching anything.
 *
 * A PEM key is imported once per allowed algorithm that fits its type (jose binds a CryptoKey to
 * one algorithm), and the token's `alg` header picks among them; anything else is refused.
 */
export async function createTokenVerifier(config: GatewayConfig): Promise<TokenVerifier | undefined> {
  const issuers = new Map<string, TrustedIssuer>();
  const external = await externalIssuer(config);
  if (external) issuers.set(...external);
  const app = appIssuer(config);
  if (app) issuers.set(...app);
  if (issuers.size === 0) return undefined;

  // A verified token stays valid until it expires (its grant's revocation is checked by the caller on
  // every request), so its result is reused until then, at most for a minute, keyed by a hash of the token.
  const verified = new LookupCache<VerifiedToken & { expiresAtMs: number }>(60_000, 20_000);

  async function verifyUncached(token: string): Promise<VerifiedToken & { expiresAtMs: number }> {
    try {
      let claimedIssuer: unknown;
      try {
        claimedIssuer = decodeJwt(token).iss;
      } catch {
        throw new TokenRejected('invalid token');
      }
      const trusted = typeof claimedIssuer === 'string' ? issuers.get(claimedIssuer) : undefined;
      if (!trusted) throw new TokenRejected('invalid token: unknown issuer');
      const { payload } = await jwtVerify(token, trusted.key, trusted.options);
      if (typeof payload.sub !== 'string' || payload.sub.length === 0) throw new TokenRejected('invalid token: no subject');
      const grantId = trusted.grants && typeof payload.grant_id === 'string' && payload.grant_id.length > 0 ? payload.grant_id : undefined;
      return {
        userId: payload.sub,
        scopes: scopesOf(payload.scope),
        ...(grantId === undefined ? {} : { grantId }),
        expiresAtMs: (payload.exp ?? 0) * 1000,
      };
    } catch (error) {
      throw describeFailure(error);
    }
  }

  // Concurrent requests with the same token share one verification (and one onCacheMiss).
  const inflight = new Map<string, Promise<VerifiedToken & { expiresAtMs: number }>>();

  return {
    async verify(token: string, onCacheMiss?: () => void): Promise<VerifiedToken> {
      if (token.length > maxTokenLength) throw new TokenRejected('invalid token: too long');
      const cacheKey = createHash('sha256').update(token).digest('base64url');
      const hit = verified.peek(cacheKey);
      if (hit !== undefined && hit.expiresAtMs > Date.now()) return hit;
      let pending = inflight.get(cacheKey);
      if (!pending) {
        onCacheMiss?.();
        pending = verifyUncached(token).finally(() => inflight.delete(cacheKey));
        inflight.set(cacheKey, pending);
      }
      const result = await pending;
      const remaining = result.expiresAtMs - Date.now();
      if (remaining > 1_000) verified.set(cacheKey, result, Math.min(remaining, 60_000));
      return result;
    },
  };
}

function describeFailure(error: unknown): TokenRejected {
  if (error instanceof TokenRejected) return error;
  if (error instanceof joseErrors.JWTExpired) return new TokenRejected('token has expired');
  if (error instanceof joseErrors.JWTClaimValidationFailed) {
    return new TokenRejected(`invalid token: ${error.claim === 'nbf' ? 'not valid yet' : `"${error.claim}" claim check failed`}`);
  }
  if (error instanceof joseErrors.JWKSTimeout || error instanceof joseErrors.JWKSInvalid) {
    return new TokenRejected('token keys are unavailable', true);
  }
  // jose reports a JWKS endpoint answering non-200 with the generic JOSEError itself.
  if (error instanceof joseErrors.JOSEError && error.code === 'ERR_JOSE_GENERIC') {
    return new TokenRejected('token keys are unavailable', true);
  }
  if (error instanceof joseErrors.JOSEError) return new TokenRejected('invalid token');
  // Not a verdict on the token: the JWKS endpoint could not be fetched or answered garbage.
  return new TokenRejected('token keys are unavailable', true);
}
