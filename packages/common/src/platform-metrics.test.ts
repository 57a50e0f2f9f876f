import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Registry } from 'prom-client';
import { afterAll, describe, expect, it } from 'vitest';
import {
  boundedLabel,
  kafkaProduceMetrics,
  objectStoreMetrics,
  packageVersion,
  registerBuildInfo,
  registerPoolMetrics,
} from './platform-metrics.js';

const sample = async (registry: Registry, line: RegExp): Promise<string[]> =>
  (await registry.metrics()).split('\n').filter((text) => line.test(text));

describe('pool gauges', () => {
  it('read every registered pool at scrape time, by pool', async () => {
    const registry = new Registry();
    const counts = { totalCount: 3, idleCount: 1, waitingCount: 0 };
    registerPoolMetrics(registry, 'tasks', counts, 20);
    registerPoolMetrics(registry, 'relay', { totalCount: 1, idleCount: 1, waitingCount: 0 }, 1);
    counts.waitingCount = 4;
    counts.idleCount = 0;
    expect(await sample(registry, /^pg_pool_/)).toEqual([
      'pg_pool_connections{pool="tasks"} 3',
      'pg_pool_connections{pool="relay"} 1',
      'pg_pool_idle_connections{pool="tasks"} 0',
      'pg_pool_idle_connections{pool="relay"} 1',
      'pg_pool_waiting_clients{pool="tasks"} 4',
      'pg_pool_waiting_clients{pool="relay"} 0',
      'pg_pool_max_connections{pool="tasks"} 20',
      'pg_pool_max_connections{pool="relay"} 1',
    ]);
  });

  it('refuses a pool name that is not a plain identifier', () => {
    expect(() => registerPoolMetrics(new Registry(), 'postgres://user@host', { totalCount: 0, idleCount: 0, waitingCount: 0 }, 1)).toThrow(/invalid pool name/);
  });
});

describe('bounded labels', () => {
  it('keep at most `limit` distinct values and map junk to other', () => {
    const label = boundedLabel(2);
    expect([label('A'), label('B'), label('C'), label('A'), label(undefined), label('has space'), label('x'.repeat(80))]).toEqual([
      'A',
      'B',
      'other',
      'A',
      'other',
      'other',
      'other',
    ]);
  });
});

describe('Kafka produce metrics', () => {
  it('time successes and failures and count failures by error class; one family per registry', async () => {
    const registry = new Registry();
    const metrics = kafkaProduceMetrics(registry);
    expect(kafkaProduceMetrics(registry)).toBe(metrics);
    await expect(metrics.time('task-events.v1', async () => 'acked')).resolves.toBe('acked');
    class KafkaJSConnectionError extends Error {
      override name = 'KafkaJSConnectionError';
    }
    await expect(metrics.time('task-events.v1', () => Promise.reject(new KafkaJSConnectionError('down')))).rejects.toThrow('down');
    expect(await sample(registry, /^kafka_produce_duration_seconds_count/)).toEqual([
      'kafka_produce_duration_seconds_count{topic="task-events.v1",outcome="ok"} 1',
      'kafka_produce_duration_seconds_count{topic="task-events.v1",outcome="error"} 1',
    ]);
    expect(await sample(registry, /^kafka_produce_errors_total/)).toEqual([
      'kafka_produce_errors_total{topic="task-events.v1",error="KafkaJSConnectionError"} 1',
    ]);
  });
});

describe('object-store metrics', () => {
  it('count errors but not 404 answers', async () => {
    const registry = new Registry();
    const metrics = objectStoreMetrics(registry);
    metrics.observe('HeadObject', 0.002, 'not_found');
    metrics.observe('PutObject', 0.01, 'ok');
    const denied = Object.assign(new Error('denied'), { name: 'AccessDenied' });
    metrics.observe('CopyObject', 0.02, 'error', denied);
    expect(await sample(registry, /^s3_request_duration_seconds_count/)).toEqual([
      's3_request_duration_seconds_count{operation="HeadObject",outcome="not_found"} 1',
      's3_request_duration_seconds_count{operation="PutObject",outcome="ok"} 1',
      's3_request_duration_seconds_count{operation="CopyObject",outcome="error"} 1',
    ]);
    expect(await sample(registry, /^s3_request_errors_total/)).toEqual(['s3_request_errors_total{operation="CopyObject",error="AccessDenied"} 1']);
  });
});

describe('build info', () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'tws-build-info-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('reads the version of the package.json above the entry point', () => {
    mkdirSync(path.join(dir, 'svc', 'dist'), { recursive: true });
    writeFileSync(path.join(dir, 'svc', 'package.json'), JSON.stringify({ name: '@tws/svc', version: '1.4.2' }));
    expect(packageVersion(path.join(dir, 'svc', 'dist', 'main.js'))).toBe('1.4.2');
    writeFileSync(path.join(dir, 'svc', 'package.json'), JSON.stringify({ version: 'x y' }));
    expect(packageVersion(path.join(dir, 'svc', 'dist', 'main.js'))).toBe('unknown');
    expect(packageVersion(undefined)).toBe('unknown');
  });

  it('labels version and revision; a missing or odd revision is unknown', async () => {
    const registry = new Registry();
    registerBuildInfo(registry, { version: '0.1.0', revision: '3f2a9c1' });
    expect(await sample(registry, /^task_workspace_build_info/)).toEqual(['task_workspace_build_info{version="0.1.0",revision="3f2a9c1"} 1']);
    const other = new Registry();
    registerBuildInfo(other, { version: '0.1.0', revision: 'evil"} 1\nx' });
    expect(await sample(other, /^task_workspace_build_info/)).toEqual(['task_workspace_build_info{version="0.1.0",revision="unknown"} 1']);
  });
});
