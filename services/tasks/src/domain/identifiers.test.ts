import { describe, expect, it } from 'vitest';
import { deriveTaskPrefix, firstFreePrefix, isUuid, newUrlId, randomString, slugify } from './identifiers.js';

describe('deriveTaskPrefix', () => {
  it.each([
    ['Mobile App Launch', 'MAL'],
    ['Website', 'WEBS'],
    ['Q3 roadmap', 'QR'],
    ['2026 Marketing plan', 'MP'],
    ['Café Déjà-vu', 'CDV'],
    ['api', 'API'],
    ['x', 'X'],
    ['One Two Three Four Five Six Seven', 'OTTFF'],
    ['Test Workspace 123-1', 'TW11'],
  ])('%s → %s', (name, prefix) => {
    expect(deriveTaskPrefix(name, 'P')).toBe(prefix);
  });

  it('falls back when the name has no letter', () => {
    expect(deriveTaskPrefix('2026', 'P')).toBe('P');
    expect(deriveTaskPrefix('!!!', 'WS')).toBe('WS');
    expect(deriveTaskPrefix('日本語', 'WS')).toBe('WS');
  });

  it('always gives upper-case letters and digits starting with a letter', () => {
    for (const name of ['a1 b2', '9lives', 'ÅSA', 'hello-world 42', 'ß straße']) {
      expect(deriveTaskPrefix(name, 'P')).toMatch(/^[A-Z][A-Z0-9]*$/);
    }
  });
});

describe('firstFreePrefix', () => {
  it('adds the first free number when the prefix is taken', () => {
    expect(firstFreePrefix('WEB', new Set())).toBe('WEB');
    expect(firstFreePrefix('WEB', new Set(['WEB']))).toBe('WEB2');
    expect(firstFreePrefix('WEB', new Set(['WEB', 'WEB2', 'WEB3']))).toBe('WEB4');
  });
});

describe('url ids', () => {
  it('are a lowercase slug plus a random suffix', () => {
    const id = newUrlId('Acme Corp — Ops Team!');
    expect(id).toMatch(/^acme-corp-ops-team-[a-z0-9]{6}$/);
    expect(newUrlId('Acme')).not.toBe(newUrlId('Acme'));
  });

  it('use a default slug when the name has no letters or digits', () => {
    expect(slugify('¡¿!')).toBe('workspace');
    expect(slugify('x'.repeat(100))).toHaveLength(40);
  });
});

describe('isUuid', () => {
  it('accepts UUIDs only', () => {
    expect(isUuid('0b9f4a4e-5f0c-4a57-9a7e-8c5d0f5d1c2b')).toBe(true);
    expect(isUuid('0B9F4A4E-5F0C-4A57-9A7E-8C5D0F5D1C2B')).toBe(true);
    expect(isUuid('123')).toBe(false);
    expect(isUuid("' OR 1=1 --")).toBe(false);
    expect(isUuid(undefined)).toBe(false);
  });
});

describe('randomString', () => {
  it('draws every character of the alphabet with about the same frequency', () => {
    const counts = new Map<string, number>();
    for (const char of randomString('abc', 30_000)) counts.set(char, (counts.get(char) ?? 0) + 1);
    for (const char of 'abc') expect(counts.get(char)).toBeGreaterThan(9_000);
  });
});
