import { describe, expect, it } from 'vitest';
import { generateApiKey, hashApiKey, looksLikeApiKey } from './api-keys.js';

describe('API keys', () => {
  it('are tws_ plus 40 base62 characters, all different', () => {
    const keys = Array.from({ length: 200 }, generateApiKey);
    for (const key of keys) expect(key).toMatch(/^tws_[0-9A-Za-z]{40}$/);
    expect(new Set(keys).size).toBe(keys.length);
  });

  it('are recognised by their shape before any lookup', () => {
    expect(looksLikeApiKey(generateApiKey())).toBe(true);
    expect(looksLikeApiKey('tws_short')).toBe(false);
    expect(looksLikeApiKey(`xyz_${'a'.repeat(40)}`)).toBe(false);
    expect(looksLikeApiKey(`tws_${'a'.repeat(39)}-`)).toBe(false);
  });

  it('are stored as a sha256 hash', () => {
    const key = generateApiKey();
    expect(hashApiKey(key)).toHaveLength(32);
    expect(hashApiKey(key).equals(hashApiKey(key))).toBe(true);
    expect(hashApiKey(key).equals(hashApiKey(generateApiKey()))).toBe(false);
  });
});
