import * as grpc from '@grpc/grpc-js';
import { describe, expect, it } from 'vitest';
import type { WebhooksApi } from '../clients/webhooks.js';
import { UserFacingError } from './errors.js';
import type { WorkspaceMembership } from './people.js';
import { checkRegistration, registrationError, toEndpointRow, Webhooks } from './webhooks.js';

const member: WorkspaceMembership = { workspaceId: 'w1', urlId: 'acme', name: 'Acme', userId: 'u1', role: 'member' };
const guest: WorkspaceMembership = { ...member, role: 'guest' };
const endpointId = '7f0c2a7e-2f7a-4a43-9d51-1f0d0c7e9a11';
const deliveryId = '0b7e2f3c-5d1a-4c4e-8a8e-2b6f7c9d0e12';

const grpcError = (code: grpc.status, details: string) => Object.assign(new Error(details), { code, details, metadata: new grpc.Metadata() });

/** A WebhooksService that records calls and answers from `answers` (a function may throw). */
function fakeApi(answers: Partial<Record<keyof WebhooksApi, (request: unknown) => unknown>>) {
  const calls: Array<{ rpc: string; request: unknown }> = [];
  const api = new Proxy({} as WebhooksApi, {
    get: (_target, rpc: string) => async (request: unknown) => {
      calls.push({ rpc, request });
      const answer = answers[rpc as keyof WebhooksApi];
      if (!answer) throw new Error(`unexpected ${rpc}`);
      return answer(request);
    },
  });
  return { api, calls };
}

describe('checkRegistration', () => {
  it('accepts a URL, a secret and a subset of the kinds (none = all, sent as [])', () => {
    expect(checkRegistration({ url: ' https://hooks.example.com/x ', secret: 's', events: ['task.completed', 'task.created'] })).toEqual({
      ok: true,
      value: { url: 'https://hooks.example.com/x', secret: 's', events: ['task.created', 'task.completed'] },
    });
    expect(checkRegistration({ url: 'https://a.example', secret: 's', events: [] })).toMatchObject({ ok: true, value: { events: [] } });
  });

  it('refuses with a sentence at the field, and the draft never carries the secret', () => {
    const empty = checkRegistration({ url: '', secret: 'hunter2', events: ['task.updated'] });
    expect(empty).toMatchObject({ ok: false, draft: { url: '', events: ['task.updated'] }, error: { field: 'url' } });
    expect(JSON.stringify(empty)).not.toContain('hunter2');
    expect(checkRegistration({ url: 'https://a.example', secret: '', events: [] })).toMatchObject({ ok: false, error: { field: 'secret', message: expect.stringMatching(/^Enter a secret/) } });
    const long = checkRegistration({ url: 'https://a.example', secret: 'x'.repeat(1025), events: [] });
    expect(long).toMatchObject({ ok: false, error: { field: 'secret', message: expect.stringContaining('at most 1024') } });
    expect(JSON.stringify(long)).not.toContain('x'.repeat(1025));
    expect(checkRegistration({ url: `https://a.example/${'p'.repeat(2048)}`, secret: 's', events: [] })).toMatchObject({ ok: false, error: { field: 'url' } });
    expect(checkRegistration({ url: 'https://a.example', secret: 's', events: ['task.deleted'] })).toMatchObject({ ok: false, error: { field: 'events' } });
  });
});

describe('registrationError (the webhooks service’s 400 messages as sentences)', () => {
  it.each([
    ['url must use https', 'url', /starts with https:\/\//],
    ['host does not resolve', 'url', /could not be found/],
    ['url resolves to a disallowed address', 'url', /private network/],
    ['url must not point to localhost', 'url', /private network/],
    ['url is not a valid URL', 'url', /not a web address/],
    ['url must not contain credentials', 'url', /user name and password/],
    ['secret is too long', 'secret', /1 to 1024/],
    ['events must be a subset of task.created, task.updated, task.completed', 'events', /Choose among/],
    ['something new', 'url', /not accepted/],
  ])('%s → %s', (details, field, message) => {
    const error = registrationError(details);
    expect(error.field).toBe(field);
    expect(error.message).toMatch(message);
  });
});

describe('Webhooks', () => {
  it('lists, creates, deletes, pages and redelivers in the membership’s workspace', async () => {
    const endpoint = { id: endpointId, url: 'https://a.example/', events: ['task.created'], createdAt: '2026-01-02T03:04:05.000Z' };
    const delivery = {
      id: deliveryId,
      eventId: 'evt_1',
      event: 'task.created',
      state: 'DELIVERY_STATE_PENDING',
      createdAt: '2026-01-02T03:04:05.000Z',
      nextAttempt: 2,
      nextAttemptAt: '2026-01-02T03:09:05.000Z',
      attempts: [{ attempt: 1, startedAt: '2026-01-02T03:04:05.000Z', durationMs: 12, outcome: 'ATTEMPT_OUTCOME_FAILED', statusCode: 500 }],
    };
    const { api, calls } = fakeApi({
      ListEndpoints: () => ({ endpoints: [endpoint] }),
      CreateEndpoint: () => ({ endpoint }),
      DeleteEndpoint: () => ({}),
      ListDeliveries: () => ({ deliveries: [delivery], nextPageToken: 'abc' }),
      RedeliverDelivery: () => ({ delivery: { ...delivery, redeliveryOf: deliveryId } }),
    });
    const webhooks = new Webhooks(api);
    expect(await webhooks.list(member)).toEqual({ endpoints: [endpoint], truncated: false });
    expect(await webhooks.get(member, endpointId)).toEqual(endpoint);
    expect(await webhooks.create(member, { url: 'https://a.example/', secret: 's', events: [] })).toEqual({ ok: true, endpoint });
    await webhooks.delete(member, endpointId);
    const page = await webhooks.deliveries(member, endpointId, '');
    expect(page).toEqual({
      nextPageToken: 'abc',
      deliveries: [
        {
          id: deliveryId,
          eventId: 'evt_1',
          event: 'task.created',
          state: 'pending',
          createdAt: delivery.createdAt,
          redeliveryOf: undefined,
          nextAttempt: 2,
          nextAttemptAt: delivery.nextAttemptAt,
          attempts: [{ attempt: 1, startedAt: delivery.createdAt, durationMs: 12, outcome: 'failed', statusCode: 500, error: undefined }],
        },
      ],
    });
    expect((await webhooks.redeliver(member, endpointId, deliveryId)).redeliveryOf).toBe(deliveryId);
    expect(calls.map((call) => call.rpc)).toEqual(['ListEndpoints', 'ListEndpoints', 'CreateEndpoint', 'DeleteEndpoint', 'ListDeliveries', 'RedeliverDelivery']);
    for (const call of calls) expect(call.request).toMatchObject({ workspaceId: 'w1' });
    expect(calls[4]?.request).toEqual({ workspaceId: 'w1', endpointId, pageSize: 20, pageToken: '' });
  });

  it('refuses a guest before any call', async () => {
    const { api, calls } = fakeApi({});
    const webhooks = new Webhooks(api);
    for (const attempt of [
      () => webhooks.list(guest),
      () => webhooks.create(guest, { url: 'https://a.example/', secret: 's', events: [] }),
      () => webhooks.delete(guest, endpointId),
      () => webhooks.deliveries(guest, endpointId, ''),
      () => webhooks.redeliver(guest, endpointId, deliveryId),
    ]) {
      await expect(attempt()).rejects.toMatchObject({ statusCode: 403, message: expect.stringMatching(/^Guests cannot see or manage the webhooks/) });
    }
    expect(calls).toEqual([]);
  });

  it('turns the service’s answers into pages: 400 at the field, 404 for unknown or foreign ids, 503 when it is down', async () => {
    const { api, calls } = fakeApi({
      CreateEndpoint: () => {
        throw grpcError(grpc.status.INVALID_ARGUMENT, 'url resolves to a disallowed address');
      },
      DeleteEndpoint: () => {
        throw grpcError(grpc.status.NOT_FOUND, 'webhook not found');
      },
      ListDeliveries: () => {
        throw grpcError(grpc.status.INVALID_ARGUMENT, 'cursor is invalid');
      },
      RedeliverDelivery: () => {
        throw grpcError(grpc.status.NOT_FOUND, 'delivery not found');
      },
      ListEndpoints: () => {
        throw grpcError(grpc.status.UNAVAILABLE, 'connect ECONNREFUSED');
      },
    });
    const webhooks = new Webhooks(api);
    expect(await webhooks.create(member, { url: 'https://10.0.0.1/', secret: 's', events: [] })).toMatchObject({ ok: false, error: { field: 'url' } });
    await expect(webhooks.delete(member, endpointId)).rejects.toMatchObject({ statusCode: 404, title: 'Webhook not found' });
    await expect(webhooks.deliveries(member, endpointId, 'bogus')).rejects.toMatchObject({ statusCode: 400 });
    await expect(webhooks.redeliver(member, endpointId, deliveryId)).rejects.toMatchObject({ statusCode: 404, title: 'Delivery not found' });
    const down = await webhooks.list(member).catch((error: unknown) => error);
    expect(down).toBeInstanceOf(UserFacingError);
    expect(down).toMatchObject({ statusCode: 503, message: expect.stringContaining('Try again in a minute') });
    expect((down as Error).message).not.toContain('ECONNREFUSED');
    // Ids that are no UUID are the same 404, without a call.
    const before = calls.length;
    await expect(webhooks.get(member, '../x')).rejects.toMatchObject({ statusCode: 404 });
    await expect(webhooks.redeliver(member, endpointId, 'nope')).rejects.toMatchObject({ statusCode: 404 });
    expect(calls.length).toBe(before);
  });
});

describe('toEndpointRow', () => {
  const base = { id: endpointId, url: 'https://a.example/', events: ['task.created'], createdAt: '2026-01-02T03:04:05.000Z' };
  it('marks an endpoint disabled only while it has a reason (auto-disabled or by request)', () => {
    expect(toEndpointRow({ ...base, enabled: true, disabledReason: 'DISABLED_REASON_UNSPECIFIED' }).disabled).toBeUndefined();
    expect(toEndpointRow({ ...base, enabled: false, disabledAt: '2026-01-05T00:00:00.000Z', disabledReason: 'DISABLED_REASON_FAILING' }).disabled).toEqual({
      at: '2026-01-05T00:00:00.000Z',
      reason: 'failing',
    });
    expect(toEndpointRow({ ...base, enabled: false, disabledReason: 'DISABLED_REASON_MANUAL' }).disabled?.reason).toBe('manual');
  });
});
