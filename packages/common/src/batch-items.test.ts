import * as grpc from '@grpc/grpc-js';
import { describe, expect, it } from 'vitest';
import { currentActor, runWithActor, systemActor, type AuditActor } from './audit/actor.js';
import { currentBatchItemOrigin, serveBatchItem } from './batch-items.js';
import { invalid } from './errors.js';
import { createLogger } from './logger.js';
import { currentRequestId, runWithRequestId } from './request-id.js';

function captureLogs(): { lines: Array<Record<string, unknown>>; write(text: string): void } {
  const lines: Array<Record<string, unknown>> = [];
  return { lines, write: (text) => lines.push(JSON.parse(text) as Record<string, unknown>) };
}

describe('coalesced call items', () => {
  it('the client side sends the request id it runs for (no trace without the SDK)', () => {
    expect(runWithRequestId('req-1', () => currentBatchItemOrigin())).toEqual({ requestId: 'req-1', traceparent: '', actor: Buffer.alloc(0) });
    expect(currentBatchItemOrigin()).toEqual({ requestId: '', traceparent: '', actor: Buffer.alloc(0) });
  });

  it('each item is audited as its own actor, never as the one of the request that opened the call', async () => {
    const logger = createLogger('test', 'info', captureLogs());
    const key: AuditActor = { type: 'apiKey', id: 'k-2', name: 'Second key' };
    const origin = runWithActor(key, () => currentBatchItemOrigin());
    expect(JSON.parse(origin.actor.toString('utf8'))).toEqual(key);
    const opener: AuditActor = { type: 'apiKey', id: 'k-1', name: 'First key' };
    const served = await runWithActor(opener, () =>
      Promise.all(
        [origin, { requestId: 'r', traceparent: '', actor: Buffer.alloc(0) }, { requestId: 'r', traceparent: '', actor: Buffer.from('{"type":"root"}') }].map(
          (item) => serveBatchItem(item, 'M', logger, async () => currentActor()),
        ),
      ),
    );
    expect(served).toEqual([{ ok: key }, { ok: systemActor }, { ok: systemActor }]);
  });

  it('each item runs in its own request id; outside of it, and for an id that is not sane, in the call\'s', async () => {
    const logger = createLogger('test', 'info', captureLogs());
    const served = await runWithRequestId('call', () =>
      Promise.all(
        [{ requestId: 'item-a', traceparent: '' }, { requestId: 'bad id with spaces', traceparent: '' }, null].map((origin) =>
          serveBatchItem(origin, 'M', logger, async () => currentRequestId()),
        ),
      ),
    );
    expect(served).toEqual([{ ok: 'item-a' }, { ok: 'call' }, { ok: 'call' }]);
  });

  it('a failure is the status its own call would answer: a DomainError\'s own, anything else INTERNAL and logged with its request id', async () => {
    const logs = captureLogs();
    const logger = createLogger('test', 'info', logs);
    const origin = { requestId: 'item-b', traceparent: '' };
    expect(await serveBatchItem(origin, 'M', logger, () => Promise.reject(invalid('name must not be empty')))).toEqual({
      error: { code: grpc.status.INVALID_ARGUMENT, details: 'name must not be empty' },
    });
    expect(await serveBatchItem(origin, 'M', logger, () => Promise.reject(new Error('boom')))).toEqual({
      error: { code: grpc.status.INTERNAL, details: 'internal error' },
    });
    expect(logs.lines).toEqual([expect.objectContaining({ level: 'error', reqId: 'item-b', method: 'M', msg: 'unhandled error in gRPC handler' })]);
  });
});
