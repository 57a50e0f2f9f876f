import { describe, expect, it } from 'vitest';
import { Webhook, WebhookVerificationError } from 'standardwebhooks';
import { signStandard, standardWebhookHeaders, verifyStandard } from './standard-webhooks.js';

const body = Buffer.from('{"id":"evt_1","event":"task.created","data":{"name":"Zoë ✓"}}');
const at = new Date();

/** What a receiver using the `standardwebhooks` package writes: the secret's UTF-8 bytes, raw format. */
const receiverOf = (secret: string): Webhook => new Webhook(Buffer.from(secret, 'utf8'), { format: 'raw' });

describe('Standard Webhooks signer', () => {
  it('matches the spec test vector (whsec_ key = base64-decoded part)', () => {
    const key = Buffer.from('MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', 'base64');
    expect(signStandard(key, 'msg_p5jXN8AQM9LWM0D4loKWxJek', 1614265330, '{"test": 2432232314}')).toBe(
      'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=',
    );
  });

  it('sends id, attempt time in unix seconds and a v1 signature the standardwebhooks package accepts', () => {
    const headers = standardWebhookHeaders('s3cr3t', 'evt_1', body, at);
    expect(headers['webhook-id']).toBe('evt_1');
    expect(headers['webhook-timestamp']).toBe(String(Math.floor(at.getTime() / 1000)));
    expect(headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/);
    expect(receiverOf('s3cr3t').verify(body, { ...headers })).toMatchObject({ id: 'evt_1' });
    expect(() => receiverOf('other').verify(body, { ...headers })).toThrow(WebhookVerificationError);
    expect(() => receiverOf('s3cr3t').verify(Buffer.concat([body, Buffer.from(' ')]), { ...headers })).toThrow('No matching signature');
  });

  it('keys with the UTF-8 bytes of any secret, a whsec_-looking or non-ASCII one included', () => {
    for (const secret of ['whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', 'clé ✓ 秘密']) {
      const headers = standardWebhookHeaders(secret, 'evt_2', body, at);
      expect(receiverOf(secret).verify(body, { ...headers })).toMatchObject({ id: 'evt_1' });
      // The package's other key formats are not ours: the base64 reading of `whsec_…`, and a raw string (code units, not UTF-8).
      expect(() => new Webhook(secret).verify(body, { ...headers })).toThrow();
    }
    const nonAscii = standardWebhookHeaders('clé', 'evt_3', body, at);
    expect(() => new Webhook('clé', { format: 'raw' }).verify(body, { ...nonAscii })).toThrow('No matching signature');
  });

  it('is rejected when the timestamp is old or in the future, or when it was changed', () => {
    const old = standardWebhookHeaders('s3cr3t', 'evt_1', body, new Date(Date.now() - 301_000));
    expect(() => receiverOf('s3cr3t').verify(body, { ...old })).toThrow('Message timestamp too old');
    const future = standardWebhookHeaders('s3cr3t', 'evt_1', body, new Date(Date.now() + 301_000));
    expect(() => receiverOf('s3cr3t').verify(body, { ...future })).toThrow('Message timestamp too new');
    const fresh = { ...old, 'webhook-timestamp': String(Math.floor(Date.now() / 1000)) };
    expect(() => receiverOf('s3cr3t').verify(body, fresh)).toThrow('No matching signature');
  });

  it('verifyStandard: the same rules, several signatures, malformed headers', () => {
    const headers = standardWebhookHeaders('s3cr3t', 'evt_1', body, at);
    expect(verifyStandard('s3cr3t', body, headers, at)).toBe(true);
    expect(verifyStandard('s3cr3t', body, { ...headers, 'webhook-signature': `v1,bm9wZQ== ${headers['webhook-signature']}` }, at)).toBe(true);
    expect(verifyStandard('s3cr3t', body, headers, new Date(at.getTime() + 301_000))).toBe(false);
    expect(verifyStandard('other', body, headers, at)).toBe(false);
    expect(verifyStandard('s3cr3t', body, { ...headers, 'webhook-id': 'evt_2' }, at)).toBe(false);
    expect(verifyStandard('s3cr3t', body, { ...headers, 'webhook-timestamp': '1e9' }, at)).toBe(false);
    expect(verifyStandard('s3cr3t', body, { 'webhook-id': 'evt_1' }, at)).toBe(false);
  });

  it('during a rotation signs with both secrets (current first); a receiver with either verifies, a third does not', () => {
    const headers = standardWebhookHeaders('new secret', 'evt_9', body, at, ['old secret']);
    const [current, previous] = headers['webhook-signature'].split(' ');
    expect(current).toBe(standardWebhookHeaders('new secret', 'evt_9', body, at)['webhook-signature']);
    expect(previous).toBe(standardWebhookHeaders('old secret', 'evt_9', body, at)['webhook-signature']);
    expect(receiverOf('new secret').verify(body, { ...headers })).toMatchObject({ id: 'evt_1' });
    expect(receiverOf('old secret').verify(body, { ...headers })).toMatchObject({ id: 'evt_1' });
    expect(() => receiverOf('other').verify(body, { ...headers })).toThrow('No matching signature');
    expect(verifyStandard('old secret', body, headers, at)).toBe(true);
  });
});
