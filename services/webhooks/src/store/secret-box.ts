import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

const version = 1;
const ivLength = 12;
const tagLength = 16;

/**
 * Encrypts endpoint secrets at rest with AES-256-GCM. Stored layout:
 * `version (1 byte) | iv (12) | tag (16) | ciphertext`. The endpoint id is bound in as additional
 * authenticated data, so a ciphertext copied onto another endpoint's row does not decrypt.
 */
export class SecretBox {
  constructor(private readonly key: Buffer) {
    if (key.length !== 32) throw new Error('SecretBox needs a 32-byte key');
  }

  seal(plaintext: string, boundTo: string): Buffer {
    const iv = randomBytes(ivLength);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv, { authTagLength: tagLength });
    cipher.setAAD(Buffer.from(boundTo, 'utf8'));
    const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return Buffer.concat([Buffer.from([version]), iv, cipher.getAuthTag(), ciphertext]);
  }

  open(sealed: Buffer, boundTo: string): string {
    if (sealed.length < 1 + ivLength + tagLength || sealed[0] !== version) throw new Error('unknown secret format');
    const iv = sealed.subarray(1, 1 + ivLength);
    const tag = sealed.subarray(1 + ivLength, 1 + ivLength + tagLength);
    const decipher = createDecipheriv('aes-256-gcm', this.key, iv, { authTagLength: tagLength });
    decipher.setAAD(Buffer.from(boundTo, 'utf8'));
    decipher.setAuthTag(tag);
    return Buffer.concat([decipher.update(sealed.subarray(1 + ivLength + tagLength)), decipher.final()]).toString('utf8');
  }
}
