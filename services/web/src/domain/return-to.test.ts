import { describe, expect, it } from 'vitest';
import { safeReturnTo } from './return-to.js';

describe('safeReturnTo', () => {
  it.each([
    ['/workspaces', '/workspaces'],
    ['/acme/settings?tab=keys#top', '/acme/settings?tab=keys#top'],
    ['/a/../b', '/b'],
    ['/acme/task/AC-12', '/acme/task/AC-12'],
  ])('keeps the same-origin path %s', (value, expected) => {
    expect(safeReturnTo(value)).toBe(expected);
  });

  it.each([
    ['a scheme-relative URL', '//evil.example/path'],
    ['an absolute URL', 'https://evil.example/'],
    ['a javascript: URL', 'javascript:alert(1)'],
    ['a backslash trick', '/\\evil.example'],
    ['a backslash later on', '/ok\\..\\..\\evil'],
    ['a tab inside the scheme-relative slashes', '/\t/evil.example'],
    ['a newline', '/a\nLocation: https://evil.example'],
    ['a path-relative value', 'workspaces'],
    ['an empty value', ''],
    ['a dot-segment climbing to //', '/.//evil.example'],
    ['the sign-in routes', '/auth/sign-in?returnTo=/x'],
    ['a value over 2048 characters', `/${'a'.repeat(2048)}`],
    ['an array (repeated query parameter)', ['/a', '/b']],
    ['no value', undefined],
  ])('refuses %s', (_label, value) => {
    expect(safeReturnTo(value)).toBeUndefined();
  });
});
