import { createHmac, timingSafeEqual } from 'node:crypto';
import { readFileSync } from 'node:fs';
import https from 'node:https';
import { Webhook } from 'standardwebhooks';
import { inject } from 'vitest';
import type { ReceivedRequest, Reply, TestReceiver } from './receiver.js';

/** What a verifying receiver concluded about one request. */
export interface Verdict {
  contract: boolean;
  /** `ok`, or the standardwebhooks package's error message (e.g. `Message timestamp too old`). */
  standard: string;
}

const header = (request: ReceivedRequest, name: string): string => {
  const value = request.headers[name];
  return Array.isArray(value) ? value.join(', ') : (value ?? '');
};

/**
 * A receiver's checks, as docs/api-webhooks.md shows them: the contract's `X-Service-Signature` (hex HMAC of
 * the raw body, constant-time compare) and the Standard Webhooks headers with the `standardwebhooks`
 * package, keyed with the secret's UTF-8 bytes (raw format), which also rejects a timestamp more
 * than 5 minutes away from the receiver's clock.
 */
export function verifyBoth(secret: string, request: ReceivedRequest): Verdict {
  const expected = Buffer.from(`sha256=${createHmac('sha256', secret).update(request.body).digest('hex')}`);
  const received = Buffer.from(header(request, 'x-service-signature'));
  const contract = expected.length === received.length && timingSafeEqual(expected, received);
  let standard = 'ok';
  try {
    new Webhook(Buffer.from(secret, 'utf8'), { format: 'raw' }).verify(request.body, {
      'webhook-id': header(request, 'webhook-id'),
      'webhook-timestamp': header(request, 'webhook-timestamp'),
      'webhook-signature': header(request, 'webhook-signature'),
    });
  } catch (error) {
    standard = error instanceof Error ? error.message : String(error);
  }
  return { contract, standard };
}

/** A `reply` for startReceiver: 204 when both signatures verify, else 401; verdicts kept in order. */
export function verifyingReply(secret: string, verdicts: Verdict[], next: (n: number) => number = () => 204): (n: number, request: ReceivedRequest) => Reply {
  return (n, request) => {
    const verdict = verifyBoth(secret, request);
    verdicts.push(verdict);
    return verdict.contract && verdict.standard === 'ok' ? next(n) : 401;
  };
}

/** Sends a captured request again to the receiver (an attacker's replay), with `headers` changed; resolves with the status. */
export function replay(receiver: TestReceiver, request: ReceivedRequest, headers: Record<string, string> = {}): Promise<number> {
  const { webhooks } = inject('stack');
  const names = ['content-type', 'user-agent', 'x-service-event', 'x-service-delivery', 'x-service-signature', 'webhook-id', 'webhook-timestamp', 'webhook-signature'];
  const sent: Record<string, string> = Object.fromEntries(names.map((name) => [name, header(request, name)]));
  return new Promise((resolve, reject) => {
    const outgoing = https.request(
      {
        method: 'POST',
        host: webhooks.receiverAddress,
        port: receiver.port,
        servername: receiver.host,
        path: request.path,
        ca: readFileSync(webhooks.caFile, 'utf8'),
        headers: { ...sent, ...headers, host: `${receiver.host}:${receiver.port}`, 'content-length': String(request.body.length) },
        agent: false,
      },
      (response) => {
        response.resume();
        response.on('end', () => resolve(response.statusCode ?? 0));
      },
    );
    outgoing.on('error', reject);
    outgoing.end(request.body);
  });
}
