import type { RequestListener, ServerResponse } from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { inject } from 'vitest';

export interface ReceivedRequest {
  method: string;
  path: string;
  headers: Record<string, string | string[] | undefined>;
  /** Raw body bytes as received. */
  body: Buffer;
  receivedAt: number;
  /** Status the receiver answered with. */
  status: number;
}

/** How to answer the n-th request (1-based): a status, optionally after a delay (ms), or hang forever. */
export type Reply = number | { status: number; delayMs?: number } | 'hang';

export interface TestReceiver {
  /** Base URL through the test DNS name, e.g. https://r1.webhooks.test:43123 */
  origin: string;
  /** Host name the receiver is reached by. */
  host: string;
  port: number;
  requests: ReceivedRequest[];
  /** Resolves once `count` requests arrived (rejects after `timeoutMs`). */
  waitFor(count: number, timeoutMs?: number): Promise<ReceivedRequest[]>;
  close(): Promise<void>;
}

let counter = 0;

/**
 * A real HTTPS receiver on loopback, with the test CA's certificate for `*.webhooks.test`, listening
 * on every given address (same port). `reply(n)` decides the answer to the n-th request.
 */
export async function startReceiver(
  options: { name?: string; reply?: (n: number, request: ReceivedRequest) => Reply; addresses?: string[] } = {},
): Promise<TestReceiver> {
  const { webhooks } = inject('stack');
  counter += 1;
  const host = `${options.name ?? `r${process.pid}-${counter}`}.${webhooks.domain}`.toLowerCase();
  const requests: ReceivedRequest[] = [];
  const waiters: Array<() => void> = [];
  const hanging = new Set<ServerResponse>();

  const handler: RequestListener = (request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const received: ReceivedRequest = {
        method: request.method ?? '',
        path: request.url ?? '',
        headers: request.headers,
        body: Buffer.concat(chunks),
        receivedAt: Date.now(),
        status: 0,
      };
      const answer = options.reply?.(requests.length + 1, received) ?? 200;
      requests.push(received);
      waiters.forEach((wake) => wake());
      if (answer === 'hang') {
        received.status = -1;
        hanging.add(response);
        return;
      }
      const { status, delayMs } = typeof answer === 'number' ? { status: answer, delayMs: 0 } : answer;
      received.status = status;
      const send = () => response.writeHead(status, { 'content-type': 'text/plain' }).end(status < 300 ? 'ok' : 'nope');
      if (delayMs) setTimeout(send, delayMs);
      else send();
    });
  };

  const addresses = options.addresses ?? [webhooks.receiverAddress];
  const servers: https.Server[] = [];
  let port = 0;
  for (const address of addresses) {
    const server = https.createServer({ cert: webhooks.serverCertPem, key: webhooks.serverKeyPem, keepAliveTimeout: 60_000 }, handler);
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, address, () => resolve());
    });
    port = (server.address() as AddressInfo).port;
    servers.push(server);
  }

  return {
    origin: `https://${host}:${port}`,
    host,
    port,
    requests,
    waitFor(count, timeoutMs = 30_000) {
      return new Promise((resolve, reject) => {
        const check = (): boolean => {
          if (requests.length >= count) {
            clearTimeout(timer);
            resolve(requests.slice(0, count));
            return true;
          }
          return false;
        };
        const timer = setTimeout(
          () => reject(new Error(`receiver ${host} got ${requests.length} of ${count} requests in ${timeoutMs} ms`)),
          timeoutMs,
        );
        if (!check()) waiters.push(() => void check());
      });
    },
    async close() {
      for (const response of hanging) response.destroy();
      await Promise.all(
        servers.map(
          (server) =>
            new Promise<void>((resolve) => {
              server.closeAllConnections();
              server.close(() => resolve());
            }),
        ),
      );
    },
  };
}
