import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * `X-Service-Signature` of the contract: `sha256=` + hex HMAC-SHA256 of the exact body bytes, keyed
 * with the endpoint's secret (its UTF-8 bytes).
 */
export function signPayload(secret: string | Buffer, body: Buffer | string): string {
  return `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
}

/** Receiver-side check (constant time); used by tests and documentation examples. */
export function verifySignature(secret: string | Buffer, body: Buffer | string, header: string | undefined): boolean {
  if (header === undefined) return false;
  const expected = Buffer.from(signPayload(secret, body));
  const received = Buffer.from(header);
  return expected.length === received.length && timingSafeEqual(expected, received);
}
