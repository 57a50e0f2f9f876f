/** Longest `returnTo` accepted (a path with its query). */
export const maxReturnToLength = 2048;

/** Where a person lands after sign-in when no (acceptable) `returnTo` was given. */
export const defaultLanding = '/workspaces';

const base = 'https://app.invalid';

/**
 * A same-origin relative path to land on after sign-in, or undefined when `value` could take the
 * browser anywhere else (an open redirect): absolute URLs, scheme-relative `//evil.example`,
 * backslashes (browsers read `/\evil.example` as `//evil.example`), control characters, and
 * anything over 2048 characters. Paths under /auth/ are refused too (no loop back into sign-in).
 * The answer is the path as the URL parser normalises it (`/a/../b` → `/b`).
 */
export function safeReturnTo(value: unknown): string | undefined {
  if (typeof value !== 'string' || value.length === 0 || value.length > maxReturnToLength) return undefined;
  if (!value.startsWith('/') || value.startsWith('//')) return undefined;
  // eslint-disable-next-line no-control-regex
  if (/[\\\u0000-\u001f\u007f]/.test(value)) return undefined;
  let url: URL;
  try {
    url = new URL(value, base);
  } catch {
    return undefined;
  }
  if (url.origin !== base) return undefined;
  const path = `${url.pathname}${url.search}${url.hash}`;
  if (path.startsWith('//') || path === '/auth' || path.startsWith('/auth/')) return undefined;
  return path;
}
