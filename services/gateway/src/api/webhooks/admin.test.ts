import { describe, expect, it } from 'vitest';
import type { Endpoint__Output } from '@tws/proto-types/generated/webhooks/v1/Endpoint';
import type { Delivery__Output } from '@tws/proto-types/generated/webhooks/v1/Delivery';
import { RotateSecretBody, UpdateWebhookBody } from './admin.js';
import { toDelivery, toWebhook } from './schemas.js';

const ok = (schema: { safeParse: (value: unknown) => { success: boolean } }, value: unknown) => schema.safeParse(value).success;

describe('PATCH /v1/webhooks/:id body', () => {
  it('needs at least one of url, events, enabled', () => {
    expect(ok(UpdateWebhookBody, {})).toBe(false);
    expect(ok(UpdateWebhookBody, { enabled: false })).toBe(true);
    expect(ok(UpdateWebhookBody, { events: ['task.created'] })).toBe(true);
    expect(ok(UpdateWebhookBody, { url: 'https://hooks.example.com/x' })).toBe(true);
  });

  it('refuses empty or unknown events, a blank or long url, a non-boolean enabled and unknown fields (the secret included)', () => {
    for (const body of [
      { events: [] },
      { events: ['task.deleted'] },
      { events: Array(11).fill('task.created') },
      { url: '' },
      { url: `https://x.example/${'a'.repeat(2048)}` },
      { enabled: 'false' },
      { enabled: null },
      { secret: 'x' },
      { enabled: true, id: 'x' },
    ]) {
      expect(ok(UpdateWebhookBody, body), JSON.stringify(body).slice(0, 80)).toBe(false);
    }
  });
});

describe('POST /v1/webhooks/:id/rotate-secret body', () => {
  it('takes a secret and an optional overlap of 0..604800 whole seconds', () => {
    expect(ok(RotateSecretBody, { secret: 'new' })).toBe(true);
    expect(ok(RotateSecretBody, { secret: 'new', overlapSeconds: 0 })).toBe(true);
    expect(ok(RotateSecretBody, { secret: 'new', overlapSeconds: 604_800 })).toBe(true);
    for (const body of [{}, { secret: '' }, { secret: 'x'.repeat(1025) }, { secret: 'n', overlapSeconds: 604_801 }, { secret: 'n', overlapSeconds: -1 }, { secret: 'n', overlapSeconds: 2.5 }, { secret: 'n', overlapSeconds: '60' }, { secret: 'n', url: 'x' }]) {
      expect(ok(RotateSecretBody, body), JSON.stringify(body).slice(0, 80)).toBe(false);
    }
  });
});

const endpoint = (fields: Partial<Endpoint__Output>): Endpoint__Output => ({
  id: 'e1',
  url: 'https://hooks.example.com/',
  events: ['task.created'],
  createdAt: '2026-11-25T00:00:00.000Z',
  enabled: true,
  disabledReason: 'DISABLED_REASON_UNSPECIFIED',
  ...fields,
});

describe('the endpoint shape', () => {
  it('adds enabled, disabledAt, disabledReason and previousSecretExpiresAt to the contract fields', () => {
    expect(toWebhook(endpoint({}))).toStrictEqual({
      id: 'e1',
      url: 'https://hooks.example.com/',
      events: ['task.created'],
      createdAt: '2026-11-25T00:00:00.000Z',
      enabled: true,
      disabledAt: null,
      disabledReason: null,
      previousSecretExpiresAt: null,
    });
    expect(
      toWebhook(endpoint({ enabled: false, disabledAt: '2026-11-25T01:00:00.000Z', disabledReason: 'DISABLED_REASON_FAILING', previousSecretExpiresAt: '2026-11-26T00:00:00.000Z' })),
    ).toMatchObject({ enabled: false, disabledAt: '2026-11-25T01:00:00.000Z', disabledReason: 'failing', previousSecretExpiresAt: '2026-11-26T00:00:00.000Z' });
    expect(toWebhook(endpoint({ enabled: false, disabledAt: '2026-11-25T01:00:00.000Z', disabledReason: 'DISABLED_REASON_MANUAL' })).disabledReason).toBe('manual');
  });

  it('a delivery log entry may be a ping; other unknown kinds are an error', () => {
    const delivery: Delivery__Output = { id: 'd', eventId: 'evt_1', event: 'ping', state: 'DELIVERY_STATE_PENDING', createdAt: '2026-11-25T00:00:00.000Z', attempts: [] };
    expect(toDelivery(delivery).event).toBe('ping');
    expect(() => toDelivery({ ...delivery, event: 'task.deleted' })).toThrow(/unknown event kind/);
  });
});
