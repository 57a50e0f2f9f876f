import { describe, expect, it } from 'vitest';
import { nameFromEmail } from './member-settings.js';
import { normaliseEmail } from './workspaces.js';

describe('members settings: a person added by email', () => {
  it('is named after the local part of the address', () => {
    expect(nameFromEmail('ada.lovelace@example.com')).toBe('ada.lovelace');
    // The last @ separates the domain (a quoted local part may hold one).
    expect(nameFromEmail('"a@b"@example.com')).toBe('"a@b"');
  });

  it('has their email normalised (trimmed, lower-cased) and bounded to 320 characters', () => {
    expect(normaliseEmail('  Ada@Example.COM ')).toBe('ada@example.com');
    expect(() => normaliseEmail('not an email')).toThrow(/valid email/);
    expect(() => normaliseEmail(`${'a'.repeat(64)}@${'b'.repeat(300)}.com`)).toThrow(/at most 320/);
  });
});
