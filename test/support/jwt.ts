import { createHmac, generateKeyPairSync, type KeyObject, createPrivateKey } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { SignJWT, UnsecuredJWT, type JWTPayload } from 'jose';
import { inject } from 'vitest';
import { localStack } from '@tws/devstack';

/**
 * Hand-made JWTs for authentication tests: correct ones (to prove the crafting works) and hostile
 * ones (expired, wrong issuer, unsigned, …). Claims default to a valid token of `sub` with `scope`.
 */
export interface TokenClaims extends JWTPayload {
  scope?: string;
}

const base64url = (value: string | Buffer): string => Buffer.from(value).toString('base64url');

export function devPrivateKey(): KeyObject {
  return createPrivateKey(readFileSync(inject('stack').devJwtPrivateKeyFile, 'utf8'));
}

/** A key pair nobody trusts. */
export function otherPrivateKey(): KeyObject {
  return generateKeyPairSync('ed25519').privateKey;
}

/** Signs `claims` with EdDSA; `iss`, `aud`, `iat` and `exp` (+5 min) default to what the stack trusts. */
export async function signToken(
  claims: TokenClaims,
  options: { key?: KeyObject; omit?: Array<'iss' | 'aud' | 'exp' | 'sub'> } = {},
): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  const payload: TokenClaims = {
    iss: localStack.devJwtIssuer,
    aud: localStack.devJwtAudience,
    iat: now,
    exp: now + 300,
    ...claims,
  };
  for (const claim of options.omit ?? []) delete payload[claim];
  return new SignJWT(payload).setProtectedHeader({ alg: localStack.devJwtAlgorithm, typ: 'JWT' }).sign(options.key ?? devPrivateKey());
}

/** The same claims, unsigned (`alg: none`). */
export function unsignedToken(claims: TokenClaims): string {
  const now = Math.floor(Date.now() / 1000);
  return new UnsecuredJWT({ iss: localStack.devJwtIssuer, aud: localStack.devJwtAudience, iat: now, exp: now + 300, ...claims }).encode();
}

/** The algorithm-confusion attack: HS256 with the server's public key PEM as the HMAC secret. */
export function hs256WithPublicKey(claims: TokenClaims): string {
  const now = Math.floor(Date.now() / 1000);
  const header = base64url(JSON.stringify({ alg: 'HS256', typ: 'JWT' }));
  const body = base64url(
    JSON.stringify({ iss: localStack.devJwtIssuer, aud: localStack.devJwtAudience, iat: now, exp: now + 300, ...claims }),
  );
  const signature = createHmac('sha256', inject('stack').devJwtPublicKeyPem).update(`${header}.${body}`).digest('base64url');
  return `${header}.${body}.${signature}`;
}

/** A validly signed token whose payload was then altered (signature no longer matches). */
export function withPayload(token: string, claims: TokenClaims): string {
  const [header, payload, signature] = token.split('.');
  const altered = { ...(JSON.parse(Buffer.from(payload ?? '', 'base64url').toString('utf8')) as TokenClaims), ...claims };
  return `${header}.${base64url(JSON.stringify(altered))}.${signature}`;
}
