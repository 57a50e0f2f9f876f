import { createLogger, type Queryable } from '@tws/common';
import { describe, expect, it } from 'vitest';
import { ApiKeyUsage } from './api-key-usage.js';

/** A recorder of the statements sent (the conditional UPDATE itself runs against Postgres in test/e2e/settings-api-keys.test.ts). */
function recordingDb(fail = false) {
  const touched: string[] = [];
  const db = {
    query: async (config: { values: string[] }) => {
      touched.push(config.values[0]!);
      if (fail) throw new Error('database down');
      return { rows: [], rowCount: 1 };
    },
  } as unknown as Queryable;
  return { db, touched };
}

const logger = createLogger('test');
logger.level = 'silent';

describe('ApiKeyUsage', () => {
  it('writes a key at most once a minute per replica, each key on its own', () => {
    let now = 1_000_000;
    const { db, touched } = recordingDb();
    const usage = new ApiKeyUsage(db, logger, () => now);
    usage.record('a');
    usage.record('a');
    usage.record('b');
    now += 59_999;
    usage.record('a');
    expect(touched).toEqual(['a', 'b']);
    now += 1;
    usage.record('a');
    expect(touched).toEqual(['a', 'b', 'a']);
  });

  it('a failed write is forgotten, so the next use tries again (and the caller never sees the error)', async () => {
    const { db, touched } = recordingDb(true);
    const usage = new ApiKeyUsage(db, logger, () => 5);
    usage.record('a');
    await new Promise((resolve) => setImmediate(resolve));
    usage.record('a');
    expect(touched).toEqual(['a', 'a']);
  });
});
