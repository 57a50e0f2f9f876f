import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * Standard Webhooks headers (https://www.standardwebhooks.com), sent beside the contract's
 * `X-Service-*` headers on every attempt:
 * - `webhook-id`: the event id (the payload `id`, equal to `X-Service-Delivery`), stable across
 *   retries and redeliveries;
 * - `webhook-timestamp`: unix seconds of this attempt;
 * - `webhook-signature`: `v1,` + base64 HMAC-SHA256 over `{id}.{timestamp}.{body}`.
 *
 * Key: the endpoint's secret as registered, its UTF-8 bytes (the same key as
 * `X-Service-Signature`). The spec's `whsec_<base64>` secret format, whose key is the base64-decoded
 * part, is not assumed: our secrets are plain strings, and a secret that happens to start with
 * `whsec_` is still keyed by its UTF-8 bytes, prefix included. A receiver using the
 * `standardwebhooks` package passes those bytes: `new Webhook(Buffer.from(secret, 'utf8'), { format: 'raw' })`.
 */
export interface StandardWebhookHeaders {
  'webhook-id': string;
  'webhook-timestamp': string;
  'webhook-signature': string;
}

/** Unix seconds of `at`. */
export const unixSeconds = (at: Date): number => Math.floor(at.getTime() / 1000);

/** `v1,<base64 HMAC-SHA256>` over the exact bytes `{id}.{timestamp}.` followed by the body bytes. */
export function signStandard(secret: string | Buffer, id: string, timestamp: number, body: Buffer | string): string {
  const hmac = createHmac('sha256', secret);
  hmac.update(`${id}.${timestamp}.`, 'utf8');
  hmac.update(body);
  return `v1,${hmac.digest('base64')}`;
}

/**
 * The three headers of one attempt made at `at`. During a secret rotation's overlap `previous`
 * holds the rotated-out secret: `webhook-signature` then carries both signatures, space-separated,
 * the current secret's first (`v1,<new> v1,<old>`), as the spec allows for key rotation.
 */
export function standardWebhookHeaders(
  secret: string | Buffer,
  id: string,
  body: Buffer,
  at: Date,
  previous: readonly (string | Buffer)[] = [],
): StandardWebhookHeaders {
  const timestamp = unixSeconds(at);
  let signatures = signStandard(secret, id, timestamp, body);
  for (const key of previous) signatures += ` ${signStandard(key, id, timestamp, body)}`;
  return { 'webhook-id': id, 'webhook-timestamp': String(timestamp), 'webhook-signature': signatures };
}

/**
 * Receiver-side check (tests and documentation): the timestamp within `toleranceSeconds` of `now`
 * (the spec's 5 minutes by default), and one of the space-separated `v1,` signatures matching in
 * constant time.
 */
export function verifyStandard(
  secret: string | Buffer,
  body: Buffer | string,
  headers: Partial<Record<keyof StandardWebhookHeaders, string>>,
  now: Date = new Date(),
  toleranceSeconds = 300,
): boolean {
  const { 'webhook-id': id, 'webhook-timestamp': stamp, 'webhook-signature': signatures } = headers;
  if (!id || !stamp || !signatures || !/^\d{1,12}$/.test(stamp)) return false;
  const timestamp = Number(stamp);
  if (Math.abs(unixSeconds(now) - timestamp) > toleranceSeconds) return false;
  const expected = Buffer.from(signStandard(secret, id, timestamp, body));
  return signatures.split(' ').some((candidate) => {
    const received = Buffer.from(candidate);
    return received.length === expected.length && timingSafeEqual(received, expected);
  });
}
