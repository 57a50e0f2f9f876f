import { describe, expect, it } from 'vitest';
import { verify } from '@octokit/webhooks-methods';
import { signPayload, verifySignature } from './signature.js';

describe('signPayload', () => {
  it('matches a known HMAC-SHA256 vector', () => {
    // RFC 4231 test case 2.
    expect(signPayload('Jefe', 'what do ya want for nothing?')).toBe(
      'sha256=5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843',
    );
  });

  it('signs the exact bytes and is accepted by an independent implementation', async () => {
    const body = Buffer.from('{"id":"evt_1","event":"task.created","data":{"name":"Zoë ✓"}}');
    const signature = signPayload('s3cr3t', body);
    expect(await verify('s3cr3t', body.toString('utf8'), signature)).toBe(true);
    expect(await verify('other', body.toString('utf8'), signature)).toBe(false);
    expect(verifySignature('s3cr3t', body, signature)).toBe(true);
    expect(verifySignature('s3cr3t', Buffer.concat([body, Buffer.from(' ')]), signature)).toBe(false);
    expect(verifySignature('s3cr3t', body, undefined)).toBe(false);
  });
});
