import { describe, expect, it } from 'vitest';
import { decodeCursor, encodeCursor } from './comments.js';

describe('comment page cursors', () => {
  const position = { createdAt: '2026-11-24T23:15:13.123456Z', id: '0b8b5ac0-1234-4abc-8def-0123456789ab' };

  it('round-trip a position, microseconds included', () => {
    const cursor = encodeCursor(position);
    expect(cursor).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(decodeCursor(cursor)).toStrictEqual(position);
  });

  it.each([
    ['not base64url', 'a b'],
    ['too long', 'A'.repeat(129)],
    ['a foreign string', Buffer.from('hello').toString('base64url')],
    ['milliseconds only', Buffer.from(`2026-11-24T23:15:13.123Z~${position.id}`).toString('base64url')],
    ['an impossible date', Buffer.from(`2026-02-30T23:15:13.123456Z~${position.id}`).toString('base64url')],
    ['a non-uuid id', Buffer.from(`${position.createdAt}~${'x'.repeat(36)}`).toString('base64url')],
  ])('rejects %s as invalid', (_label, cursor) => {
    expect(() => decodeCursor(cursor)).toThrow(/cursor is not valid/);
  });
});
