import { describe, expect, test } from 'vitest';
import { allows, requiredScope, scopesOf, type Principal } from './principal.js';

describe('scopes', () => {
  test.each([
    ['read', ['read']],
    ['write', ['write', 'read']],
    ['openid read profile', ['read']],
    ['read write', ['read', 'write']],
    ['', []],
    ['admin', []],
    ['READ', []],
  ])('%j → %j', (claim, expected) => {
    expect([...scopesOf(claim)].sort()).toEqual([...expected].sort());
  });

  test('array claims are accepted, anything else grants nothing', () => {
    expect([...scopesOf(['write'])].sort()).toEqual(['read', 'write']);
    expect(scopesOf(undefined).size).toBe(0);
    expect(scopesOf(42).size).toBe(0);
  });

  test('GET and HEAD read, everything else writes', () => {
    expect(['GET', 'HEAD', 'POST', 'PATCH', 'DELETE', 'PUT'].map(requiredScope)).toEqual(['read', 'read', 'write', 'write', 'write', 'write']);
  });

  test('allows', () => {
    const user = (claim: string): Principal => ({ workspaceId: 'w', kind: 'user', userId: 'u', scopes: scopesOf(claim) });
    const apiKey: Principal = { workspaceId: 'w', kind: 'apiKey', apiKeyId: 'k', apiKeyName: 'n', userId: 'u' };
    expect(allows(user('read'), 'GET')).toBe(true);
    expect(allows(user('read'), 'DELETE')).toBe(false);
    expect(allows(user('write'), 'GET')).toBe(true);
    expect(allows(user('write'), 'PATCH')).toBe(true);
    expect(allows(user(''), 'GET')).toBe(false);
    expect(allows(apiKey, 'DELETE')).toBe(true);
  });
});
