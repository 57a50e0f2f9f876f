import { describe, expect, test } from 'vitest';
import type { Queryable } from '@tws/common';
import { beginIdempotentRequest, completeIdempotentRequest, releaseIdempotentRequest } from './idempotency.js';

const workspaceId = '0a9f3c52-6c3e-4c39-9d2f-1b1f7c1e0a01';
const settings = { ttlMs: 86_400_000, lockTimeoutMs: 60_000 };
const print = (byte: number): Buffer => Buffer.alloc(32, byte);

type Row = { fingerprint: Buffer; status_code: number | null; content_type: string | null; body: Buffer | null };

/** Answers the store's two statements of Begin from scripted results, and records every query. */
function scripted(claims: boolean[], reads: Array<Row | undefined>): Queryable & { sql: string[] } {
  const sql: string[] = [];
  return {
    sql,
    query: (async (text: string) => {
      sql.push(text.trim().split(/\s+/)[0]!);
      if (text.trimStart().startsWith('INSERT')) return { rowCount: claims.shift() ? 1 : 0, rows: [] };
      if (text.trimStart().startsWith('SELECT')) {
        const row = reads.shift();
        return { rowCount: row ? 1 : 0, rows: row ? [row] : [] };
      }
      return { rowCount: 1, rows: [] };
    }) as unknown as Queryable['query'],
  };
}

describe('beginIdempotentRequest', () => {
  const begin = (db: Queryable, fingerprint = print(1)) => beginIdempotentRequest(db, settings, { workspaceId, key: 'k', fingerprint });

  test('a claimed key proceeds with a fresh claim token', async () => {
    const outcome = await begin(scripted([true], []));
    expect(outcome).toEqual({ outcome: 'proceed', claimToken: expect.stringMatching(/^[0-9a-f-]{36}$/) });
  });

  test('an answered key of the same request replays, of another request mismatches', async () => {
    const answered: Row = { fingerprint: print(1), status_code: 201, content_type: 'application/json', body: Buffer.from('{"id":"x"}') };
    expect(await begin(scripted([false], [answered]))).toEqual({
      outcome: 'replay',
      answer: { statusCode: 201, contentType: 'application/json', body: Buffer.from('{"id":"x"}') },
    });
    expect(await begin(scripted([false], [answered]), print(2))).toEqual({ outcome: 'mismatch' });
  });

  test('a claimed key without an answer is in progress (or a mismatch for another request)', async () => {
    const claimed: Row = { fingerprint: print(1), status_code: null, content_type: null, body: null };
    expect(await begin(scripted([false], [claimed]))).toEqual({ outcome: 'in_progress' });
    expect(await begin(scripted([false], [claimed]), print(3))).toEqual({ outcome: 'mismatch' });
  });

  test('a row released between the claim and the read is claimed again; the third miss counts as in progress', async () => {
    const db = scripted([false, true], [undefined]);
    expect((await begin(db)).outcome).toBe('proceed');
    expect(db.sql).toEqual(['INSERT', 'SELECT', 'INSERT']);
    expect(await begin(scripted([false, false, false], [undefined, undefined, undefined]))).toEqual({ outcome: 'in_progress' });
  });

  test('refuses what the table would: a key out of form, a fingerprint that is not SHA-256, a workspace that is not a UUID', async () => {
    const db = scripted([true], []);
    await expect(beginIdempotentRequest(db, settings, { workspaceId, key: 'a b', fingerprint: print(1) })).rejects.toThrow(/key/);
    await expect(beginIdempotentRequest(db, settings, { workspaceId, key: 'x'.repeat(256), fingerprint: print(1) })).rejects.toThrow(/key/);
    await expect(beginIdempotentRequest(db, settings, { workspaceId, key: 'k', fingerprint: Buffer.alloc(31) })).rejects.toThrow(/fingerprint/);
    await expect(beginIdempotentRequest(db, settings, { workspaceId: 'w', key: 'k', fingerprint: print(1) })).rejects.toThrow(/workspace_id/);
    expect(db.sql).toEqual([]);
  });
});

describe('completeIdempotentRequest / releaseIdempotentRequest', () => {
  const claimToken = '7c1d2e3f-4a5b-4c6d-8e7f-9a0b1c2d3e03';
  const answer = { statusCode: 201, contentType: 'application/json', body: Buffer.from('{}') };

  test('stores 2xx..4xx answers up to 64 KiB, refuses others before any query', async () => {
    const db = scripted([], []);
    expect(await completeIdempotentRequest(db, settings, { workspaceId, key: 'k', claimToken, answer })).toBe(true);
    for (const bad of [{ ...answer, statusCode: 500 }, { ...answer, statusCode: 199 }, { ...answer, body: Buffer.alloc(65_537) }, { ...answer, contentType: 'x'.repeat(256) }]) {
      await expect(completeIdempotentRequest(db, settings, { workspaceId, key: 'k', claimToken, answer: bad })).rejects.toThrow();
    }
    await expect(completeIdempotentRequest(db, settings, { workspaceId, key: 'k', claimToken: 'nope', answer })).rejects.toThrow(/claim_token/);
    expect(db.sql).toEqual(['UPDATE']);
  });

  test('release deletes only with a claim token', async () => {
    const db = scripted([], []);
    await releaseIdempotentRequest(db, { workspaceId, key: 'k', claimToken });
    await expect(releaseIdempotentRequest(db, { workspaceId, key: 'k', claimToken: '' })).rejects.toThrow(/claim_token/);
    expect(db.sql).toEqual(['DELETE']);
  });
});
