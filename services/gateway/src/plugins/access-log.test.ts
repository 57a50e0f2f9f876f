/*
 * Access logs: one `access` line per sampled, failed (5xx) or slow request, with the route template,
 * status, duration, credential kind, workspace and an id prefix, and the request id; never the key,
 * the raw URL or a probe.
 */
import * as grpc from '@grpc/grpc-js';
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import { call, fakeCredentials, ids, RpcFailure, startGateway, validApiKey, type Harness } from '../testing/harness.js';
import { shouldLog } from './access-log.js';

/** The gateway's log lines, parsed. */
function capture(): { lines: Array<Record<string, unknown>>; write(line: string): void } {
  const lines: Array<Record<string, unknown>> = [];
  return { lines, write: (line) => lines.push(JSON.parse(line) as Record<string, unknown>) };
}
const accessLines = (log: ReturnType<typeof capture>) => log.lines.filter((line) => line.msg === 'access');

describe('shouldLog', () => {
  const policy = { sampleRatio: 0.25, slowMs: 1_000 };
  test('every 5xx and every slow request, whatever the draw', () => {
    expect(shouldLog(policy, 503, 3, () => 0.99)).toBe(true);
    expect(shouldLog(policy, 200, 1_000, () => 0.99)).toBe(true);
  });
  test('the rest by the sample ratio; 0 never, 1 always', () => {
    expect(shouldLog(policy, 200, 3, () => 0.2)).toBe(true);
    expect(shouldLog(policy, 404, 3, () => 0.3)).toBe(false);
    expect(shouldLog({ ...policy, sampleRatio: 0 }, 200, 3, () => 0)).toBe(false);
    expect(shouldLog({ ...policy, sampleRatio: 1 }, 200, 3, () => 0.999)).toBe(true);
  });
});

describe('access log, every request sampled', () => {
  const log = capture();
  let h: Harness;
  beforeAll(async () => {
    h = await startGateway({ ACCESS_LOG_SAMPLE_RATIO: '1' }, undefined, log);
    fakeCredentials(h.fake);
    h.fake.handlers.set('GetTask', () => ({ json: '{"id":"x"}' }));
  });
  afterAll(async () => h.close());
  afterEach(() => {
    log.lines.length = 0;
  });

  test('a request with an API key: route template, status, duration, credential kind and id prefix, request id', async () => {
    const response = await call(h.app, 'GET', `/v1/tasks/${ids.task}`, { apiKey: validApiKey, headers: { 'x-request-id': 'req-access-1' } });
    const [line, ...more] = accessLines(log);
    expect(more).toEqual([]);
    expect(line).toMatchObject({
      level: 'info',
      method: 'GET',
      route: '/v1/tasks/:id',
      statusCode: response.status,
      credential: 'apiKey',
      credentialId: ids.apiKey.slice(0, 8),
      workspaceId: ids.workspace,
      reqId: 'req-access-1',
    });
    expect(line?.durationMs).toEqual(expect.any(Number));
    const text = JSON.stringify(log.lines);
    expect(text).not.toContain(validApiKey);
    expect(text).not.toContain(ids.apiKey); // only its prefix
    expect(text).not.toContain(`/v1/tasks/${ids.task}`); // the template, not the URL
  });

  test('an unauthenticated request is credential "none"; an unknown path is route "unmatched"', async () => {
    await call(h.app, 'GET', '/v1/workspace');
    await call(h.app, 'GET', '/v1/no/such/path?secret=1');
    expect(accessLines(log).map((line) => [line.route, line.statusCode, line.credential])).toEqual([
      ['/v1/workspace', 401, 'none'],
      ['unmatched', 404, 'none'],
    ]);
    expect(JSON.stringify(log.lines)).not.toContain('secret=1');
  });

  test('probes and scrapes are never logged', async () => {
    for (const url of ['/healthz', '/readyz', '/metrics']) expect((await h.app.inject({ method: 'GET', url })).statusCode).toBe(200);
    expect(accessLines(log)).toEqual([]);
  });
});

describe('access log, default sampling (1 %)', () => {
  const log = capture();
  let h: Harness;
  beforeAll(async () => {
    h = await startGateway({ ACCESS_LOG_SLOW_MS: '60000' }, undefined, log);
    fakeCredentials(h.fake);
  });
  afterAll(async () => h.close());

  test('a 5xx is always logged; of 300 ordinary requests only a sample', async () => {
    h.fake.handlers.set('GetWorkspace', () => {
      throw new RpcFailure(grpc.status.INTERNAL, 'boom');
    });
    const failed = await call(h.app, 'GET', '/v1/workspace', { apiKey: validApiKey });
    expect(failed.status).toBeGreaterThanOrEqual(500);
    expect(accessLines(log)).toMatchObject([{ route: '/v1/workspace', statusCode: failed.status, credential: 'apiKey' }]);

    log.lines.length = 0;
    for (let i = 0; i < 300; i += 1) await call(h.app, 'GET', '/v1/no/such/path', { apiKey: validApiKey });
    // 1 % of 300: 3 expected; more than 30 happens with probability < 1e-20.
    expect(accessLines(log).length).toBeLessThan(30);
  });
});
