import { createCipheriv, createDecipheriv, createHmac, hkdfSync, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * Keys derived from SESSION_SECRET (HKDF-SHA256, one label per purpose), so the one secret never
 * serves two purposes directly.
 */
export class SecretKeys {
  readonly cookieKey: Buffer;
  readonly csrfKey: Buffer;

  constructor(secret: string) {
    const derive = (label: string): Buffer => Buffer.from(hkdfSync('sha256', Buffer.from(secret, 'utf8'), Buffer.alloc(0), label, 32));
    this.cookieKey = derive('tws-web sealed cookie v1');
    this.csrfKey = derive('tws-web csrf token v1');
  }
}

/**
 * Seals a JSON value for a cookie: AES-256-GCM (confidential and tamper-evident), bound to the
 * cookie's name (as additional data) and carrying its own expiry. `open` answers undefined for
 * anything that is not a value this key sealed under this name, or that has expired.
 */
export function seal(key: Buffer, name: string, value: unknown, ttlSeconds: number, now = Date.now()): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(Buffer.from(name, 'utf8'));
  const plain = Buffer.from(JSON.stringify({ exp: now + ttlSeconds * 1000, value }), 'utf8');
  const encrypted = Buffer.concat([cipher.update(plain), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), encrypted]).toString('base64url');
}

/** Largest sealed value `open` looks at (a sign-in flow is ~300 bytes). */
const maxSealedLength = 4096;

export function open(key: Buffer, name: string, sealed: string | undefined, now = Date.now()): unknown {
  if (!sealed || sealed.length > maxSealedLength || !/^[A-Za-z0-9_-]+$/.test(sealed)) return undefined;
  const bytes = Buffer.from(sealed, 'base64url');
  if (bytes.length < 12 + 16 + 1) return undefined;
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, bytes.subarray(0, 12));
    decipher.setAAD(Buffer.from(name, 'utf8'));
    decipher.setAuthTag(bytes.subarray(12, 28));
    const plain = Buffer.concat([decipher.update(bytes.subarray(28)), decipher.final()]);
    const parsed = JSON.parse(plain.toString('utf8')) as { exp?: unknown; value?: unknown };
    return typeof parsed.exp === 'number' && parsed.exp > now ? parsed.value : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The CSRF token of a session (OWASP's HMAC-based synchronizer token): HMAC of the session's id
 * hash, so it is bound to that session, needs no storage, and is worthless after sign-out.
 */
export function csrfToken(key: Buffer, sessionIdHash: Buffer): string {
  return createHmac('sha256', key).update(sessionIdHash).digest('base64url');
}

export function csrfTokenMatches(key: Buffer, sessionIdHash: Buffer, presented: unknown): boolean {
  if (typeof presented !== 'string' || presented.length !== 43) return false;
  const expected = Buffer.from(csrfToken(key, sessionIdHash), 'utf8');
  const given = Buffer.from(presented, 'utf8');
  return given.length === expected.length && timingSafeEqual(given, expected);
}
