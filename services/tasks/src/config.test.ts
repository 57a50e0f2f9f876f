import { expect, test } from 'vitest';
import { loadConfig } from './config.js';

const required = { DATABASE_URL: 'postgres://tasks@localhost/tasks', KAFKA_BROKERS: 'localhost:9092' };

test('task list streams: 10 at once for 2 minutes each by default, fewer than the pool holds', () => {
  expect(loadConfig(required)).toMatchObject({ TASK_LIST_MAX_STREAMS: 10, TASK_LIST_STREAM_TIMEOUT_MS: 120_000, DATABASE_POOL_SIZE: 20 });
  expect(() => loadConfig({ ...required, TASK_LIST_MAX_STREAMS: '20' })).toThrow(/TASK_LIST_MAX_STREAMS: must be below DATABASE_POOL_SIZE/);
  expect(loadConfig({ ...required, TASK_LIST_MAX_STREAMS: '20', DATABASE_POOL_SIZE: '21' }).TASK_LIST_MAX_STREAMS).toBe(20);
  expect(() => loadConfig({ ...required, TASK_LIST_STREAM_TIMEOUT_MS: '999' })).toThrow(/TASK_LIST_STREAM_TIMEOUT_MS/);
});
