import { createHash, createPublicKey } from 'node:crypto';
import {
  createRemoteJWKSet,
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
 * Builds the Bearer token verifier from config, or undefined when neither a JWKS URL nor a public
 * key is configured (then every Bearer token is refused with 401).
 *
 * A PEM key is imported once per allowed algorithm that fits its type (jose binds a CryptoKey to
 * one algorithm), and the token's `alg` header picks among them; anything else is refused.
 */
export async function createTokenVerifier(config: GatewayConfig): Promise<TokenVerifier | undefined> {
  const allowed = config.AUTH_JWT_ALGORITHMS;
  let key: JWTVerifyGetKey;
  let algorithms: string[];
  if (config.AUTH_JWT_JWKS_URL) {
    key = createRemoteJWKSet(new URL(config.AUTH_JWT_JWKS_URL));
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

  const options: JWTVerifyOptions = {
    algorithms,
    ...(config.AUTH_JWT_ISSUER ? { issuer: config.AUTH_JWT_ISSUER } : {}),
    ...(config.AUTH_JWT_AUDIENCE ? { audience: config.AUTH_JWT_AUDIENCE } : {}),
    clockTolerance: config.AUTH_JWT_CLOCK_TOLERANCE_SECONDS,
    requiredClaims: ['sub', 'exp'],
  };
  // A verified token stays valid until it expires (JWTs are not revocable here), so its result is
  // reused until then, at most for a minute, keyed by a hash of the token.
  const verified = new LookupCache<VerifiedToken & { expiresAtMs: number }>(60_000, 20_000);

  async function verifyUncached(token: string): Promise<VerifiedToken & { expiresAtMs: number }> {
    try {
      const { payload } = await jwtVerify(token, key, options);
      if (typeof payload.sub !== 'string' || payload.sub.length === 0) throw new TokenRejected('invalid token: no subject');
      return { userId: payload.sub, scopes: scopesOf(payload.scope), expiresAtMs: (payload.exp ?? 0) * 1000 };
    } catch (error) {
      throw describeFailure(error);
    }
  }

  // Concurrent requests with the same token share one verification (and one onCacheMiss).
  const inflight = new Map<string, Promise<VerifiedToken & { expiresAtMs: number }>>();

  return {
    async verify(token: string, onCacheMiss?: () => void): Promise<VerifiedToken> {
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
