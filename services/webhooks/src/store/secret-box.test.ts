import { describe, expect, it } from 'vitest';
import { SecretBox } from './secret-box.js';

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
