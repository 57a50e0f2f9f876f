import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { csrfToken, csrfTokenMatches, open, seal, SecretKeys } from './secrets.js';

const keys = new SecretKeys('s'.repeat(32));

describe('sealed cookies', () => {
  it('open answers what seal sealed, until it expires', () => {
    const now = Date.now();
    const sealed = seal(keys.cookieKey, 'flow', { state: 'x' }, 60, now);
    expect(open(keys.cookieKey, 'flow', sealed, now + 59_000)).toEqual({ state: 'x' });
    expect(open(keys.cookieKey, 'flow', sealed, now + 60_000)).toBeUndefined();
  });

  it('refuses another name, another key, a changed byte and junk', () => {
    const sealed = seal(keys.cookieKey, 'flow', { state: 'x' }, 60);
    expect(open(keys.cookieKey, 'other', sealed)).toBeUndefined();
    expect(open(new SecretKeys('t'.repeat(32)).cookieKey, 'flow', sealed)).toBeUndefined();
    const bytes = Buffer.from(sealed, 'base64url');
    bytes[bytes.length - 1]! ^= 1;
    expect(open(keys.cookieKey, 'flow', bytes.toString('base64url'))).toBeUndefined();
    for (const junk of [undefined, '', 'a', 'not base64!', 'A'.repeat(5000)]) expect(open(keys.cookieKey, 'flow', junk)).toBeUndefined();
  });

  it('does not show what it seals', () => {
    const sealed = seal(keys.cookieKey, 'flow', { verifier: 'very-secret-verifier' }, 60);
    expect(Buffer.from(sealed, 'base64url').toString('latin1')).not.toContain('very-secret-verifier');
  });
});

describe('CSRF tokens', () => {
  it('match only the session they were made for', () => {
    const session = randomBytes(32);
    const token = csrfToken(keys.csrfKey, session);
    expect(csrfTokenMatches(keys.csrfKey, session, token)).toBe(true);
    expect(csrfTokenMatches(keys.csrfKey, randomBytes(32), token)).toBe(false);
    expect(csrfTokenMatches(new SecretKeys('t'.repeat(32)).csrfKey, session, token)).toBe(false);
    for (const junk of [undefined, '', 42, ['x'], token.slice(1), `${token}x`]) expect(csrfTokenMatches(keys.csrfKey, session, junk)).toBe(false);
  });
});
