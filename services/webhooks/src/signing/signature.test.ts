import { describe, expect, it } from 'vitest';
import { verify } from '@octokit/webhooks-methods';
import { SecretBox } from './secret-box.js';
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

describe('SecretBox', () => {
  const box = new SecretBox(Buffer.alloc(32, 7));

  it('round-trips and never stores the plaintext', () => {
    const sealed = box.seal('whsec_abc', 'endpoint-1');
    expect(sealed.includes(Buffer.from('whsec_abc'))).toBe(false);
    expect(box.open(sealed, 'endpoint-1')).toBe('whsec_abc');
    expect(box.seal('whsec_abc', 'endpoint-1').equals(sealed)).toBe(false);
  });

  it('refuses a ciphertext moved to another endpoint, tampered with, or under another key', () => {
    const sealed = box.seal('whsec_abc', 'endpoint-1');
    expect(() => box.open(sealed, 'endpoint-2')).toThrow();
    const tampered = Buffer.from(sealed);
    tampered[tampered.length - 1]! ^= 1;
    expect(() => box.open(tampered, 'endpoint-1')).toThrow();
    expect(() => new SecretBox(Buffer.alloc(32, 8)).open(sealed, 'endpoint-1')).toThrow();
  });
});
