import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Registry } from 'prom-client';
import type { Logger } from 'pino';
import { runReadiness, type ReadinessCheck } from './readiness.js';
import { metricsExposition } from './exemplars.js';

export interface OpsServer {
  port: number;
  /** Makes /readyz answer 503 from now on (used at the start of shutdown). */
  markShuttingDown(): void;
  close(): Promise<void>;
}

/**
 * The operations endpoints of a backend service: /healthz (the process is alive), /readyz (its real
 * dependencies answer) and /metrics (Prometheus text format; OpenMetrics, with exemplars, when the
 * scrape's Accept asks for it: exemplars.ts).
 */
export async function startOpsServer(options: {
  host: string;
  port: number;
  registry: Registry;
  readiness: ReadinessCheck[];
  logger: Logger;
}): Promise<OpsServer> {
  let shuttingDown = false;
  const server = http.createServer((request, response) => {
    const path = (request.url ?? '/').split('?')[0];
    const send = (status: number, body: unknown, contentType = 'application/json'): void => {
      response.writeHead(status, { 'content-type': contentType });
      response.end(typeof body === 'string' ? body : JSON.stringify(body));
    };
    if (request.method !== 'GET') return send(405, { error: 'method not allowed' });
    if (path === '/healthz') return send(200, { status: 'ok' });
    if (path === '/readyz') {
      if (shuttingDown) return send(503, { status: 'shutting down' });
      void runReadiness(options.readiness).then((report) =>
        send(report.ready ? 200 : 503, { status: report.ready ? 'ok' : 'unavailable', checks: report.checks }),
      );
      return;
    }
    if (path === '/metrics') {
      void metricsExposition(options.registry, request.headers.accept).then(
        (exposition) => send(200, exposition.body, exposition.contentType),
        (error: unknown) => {
          options.logger.error({ err: error }, 'metrics collection failed');
          send(500, { error: 'metrics collection failed' });
        },
      );
      return;
    }
    send(404, { error: 'not found' });
  });
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  options.logger.info({ port }, 'ops server listening (/healthz, /readyz, /metrics)');
  return {
    port,
    markShuttingDown: () => {
      shuttingDown = true;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
      }),
  };
}
