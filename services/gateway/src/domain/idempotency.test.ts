import { createHash } from 'node:crypto';
import { describe, expect, test } from 'vitest';
import { credentialOf, fingerprintOf, isStoredStatus, parseIdempotencyKey, type RequestIdentity } from './idempotency.js';

const digest = (body: string): Buffer => createHash('sha256').update(body).digest();
const base: RequestIdentity = {
  method: 'POST',
  route: '/v1/tasks/:id/comments',
  params: { id: 'a' },
  query: '',
  credential: 'apiKey:k1',
  bodyDigest: digest('{"text":"hi"}'),
};

describe('parseIdempotencyKey', () => {
  test('takes 1..255 visible ASCII characters', () => {
    for (const key of ['a', '0f8fad5b-d9cb-469f-a165-70867728950e', '!~"#{}', 'x'.repeat(255)]) expect(parseIdempotencyKey(key)).toBe(key);
  });

  test('refuses empty, too long, spaces, controls, non-ASCII and a header sent twice', () => {
    for (const key of ['', 'x'.repeat(256), 'a b', 'a\tb', 'ключ', 'é', 'a\u007f']) expect(parseIdempotencyKey(key)).toBeUndefined();
    expect(parseIdempotencyKey(['a', 'b'])).toBeUndefined();
  });
});

describe('fingerprintOf', () => {
  test('is a SHA-256 and stable for the same request', () => {
    const print = fingerprintOf(base);
    expect(print).toHaveLength(32);
    expect(fingerprintOf({ ...base, params: { id: 'a' } }).equals(print)).toBe(true);
  });

  test('changes with each part of the request', () => {
    const print = fingerprintOf(base);
    const variants: RequestIdentity[] = [
      { ...base, method: 'PUT' },
      { ...base, route: '/v1/tasks' },
      { ...base, params: { id: 'b' } },
      { ...base, query: 'x=1' },
      { ...base, credential: 'user:u1' },
      { ...base, bodyDigest: digest('{"text":"hi "}') },
      { ...base, bodyDigest: digest('{ "text":"hi"}') }, // raw bytes: the same JSON written differently is another request
    ];
    for (const variant of variants) expect(fingerprintOf(variant).equals(print)).toBe(false);
  });

  test('parts cannot run into each other (no separator ambiguity), and parameter order does not matter', () => {
    const a = fingerprintOf({ ...base, route: '/v1/a', query: 'b' });
    const b = fingerprintOf({ ...base, route: '/v1/ab', query: '' });
    expect(a.equals(b)).toBe(false);
    const two = { ...base, params: { id: '1', other: '2' } };
    expect(fingerprintOf(two).equals(fingerprintOf({ ...base, params: { other: '2', id: '1' } }))).toBe(true);
    expect(fingerprintOf(two).equals(fingerprintOf({ ...base, params: { id: '2', other: '1' } }))).toBe(false);
  });
});

describe('credentialOf', () => {
  test('an API key by its id, a person by their user id', () => {
    expect(credentialOf({ kind: 'apiKey', workspaceId: 'w', apiKeyId: 'k', apiKeyName: 'n', userId: 'u' })).toBe('apiKey:k');
    expect(credentialOf({ kind: 'user', workspaceId: 'w', userId: 'u', scopes: new Set(['write']) })).toBe('user:u');
  });
});

describe('isStoredStatus', () => {
  test('2xx and definite 4xx are stored; 5xx, 401, 408, 425, 429 are not', () => {
    for (const status of [200, 201, 204, 400, 403, 404, 409, 412, 422]) expect(isStoredStatus(status), String(status)).toBe(true);
    for (const status of [100, 301, 304, 401, 408, 425, 429, 500, 502, 503, 504]) expect(isStoredStatus(status), String(status)).toBe(false);
  });
});
