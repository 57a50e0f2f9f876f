// A minimal OTLP/HTTP trace receiver for BENCH_TRACING=1 (bench/lib/otlp-sink.mjs starts it in a
// process of its own, like the ceiling, so it takes no CPU from the load generator's event loop).
// It answers every export as a collector does (200, an empty ExportTraceServiceResponse) and counts
// requests and bytes; it does not decode or keep spans. Bodies over 16 MiB are refused (413).
import { createServer } from 'node:http';

const maxBodyBytes = 16 * 2 ** 20;
const stats = { exportRequests: 0, bytes: 0, rejected: 0 };

const server = createServer((request, response) => {
  if (request.method !== 'POST' || request.url !== '/v1/traces') {
    stats.rejected += 1;
    response.writeHead(404).end();
    return;
  }
  let size = 0;
  request.on('data', (chunk) => {
    size += chunk.length;
    if (size > maxBodyBytes) {
      stats.rejected += 1;
      response.writeHead(413, { connection: 'close' }).end();
      request.destroy();
    }
  });
  request.on('end', () => {
    stats.exportRequests += 1;
    stats.bytes += size;
    const json = (request.headers['content-type'] ?? '').includes('json');
    response.writeHead(200, { 'content-type': json ? 'application/json' : 'application/x-protobuf' }).end(json ? '{}' : '');
  });
});
server.requestTimeout = 30_000;
server.listen(0, '127.0.0.1', () => process.send?.({ port: server.address().port }));
process.on('message', (message) => {
  if (message === 'stats') process.send?.({ stats });
});
process.on('disconnect', () => process.exit(0));
