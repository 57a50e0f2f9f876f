// A minimal webhook receiver for the task workspace service: Node.js 20+, no dependencies.
//
//   WEBHOOK_SECRET='the secret you registered' TLS_CERT_FILE=cert.pem TLS_KEY_FILE=key.pem PORT=8443 node server.mjs
//
// It verifies BOTH signatures of every delivery before it parses the body: the contract's
// X-Service-Signature (sha256=<hex HMAC of the raw body>) and the Standard Webhooks
// webhook-signature (v1,<base64 HMAC of "id.timestamp.body">, with the timestamp at most
// 5 minutes off), answers 204 at once, skips events it has already seen, and prints one JSON line
// per accepted event on stdout (rejections go to stderr).
import { createHmac, timingSafeEqual } from 'node:crypto';
import { readFileSync } from 'node:fs';
import https from 'node:https';

function required(name) {
  const value = process.env[name];
  if (!value) {
    console.error(`${name} must be set (see README.md)`);
    process.exit(2);
  }
  return value;
}

// The key is the secret exactly as registered, as UTF-8 bytes (never base64-decoded, even "whsec_…").
const secret = Buffer.from(required('WEBHOOK_SECRET'), 'utf8');
const tls = { cert: readFileSync(required('TLS_CERT_FILE')), key: readFileSync(required('TLS_KEY_FILE')) };
const port = Number(process.env.PORT ?? 8443);
const host = process.env.HOST ?? '0.0.0.0';
if (!Number.isInteger(port) || port < 0 || port > 65535) {
  console.error('PORT must be a port number (0 picks a free one)');
  process.exit(2);
}

const maxBodyBytes = 1024 * 1024; // payloads are a few KiB; refuse anything absurd
const toleranceSeconds = 5 * 60;
const rememberedIds = 100_000; // dedupe memory: the ids of the last 100 000 events (use your database in production)
const seen = new Set();

const hmac = (...parts) => {
  const mac = createHmac('sha256', secret);
  for (const part of parts) mac.update(part);
  return mac.digest();
};
// Constant time: equal lengths are compared with timingSafeEqual, never with ===.
const same = (a, b) => a.length === b.length && timingSafeEqual(a, b);
const header = (request, name) => {
  const value = request.headers[name];
  return typeof value === 'string' ? value : '';
};

/** Why the request is not authentic, or null when both signatures verify. */
function problemOf(request, body) {
  const contract = Buffer.from(header(request, 'x-service-signature'));
  if (!same(contract, Buffer.from(`sha256=${hmac(body).toString('hex')}`))) return 'bad X-Service-Signature';

  const id = header(request, 'webhook-id');
  const timestamp = header(request, 'webhook-timestamp');
  if (!id || !/^\d{1,12}$/.test(timestamp)) return 'missing webhook-id or webhook-timestamp';
  const age = Math.floor(Date.now() / 1000) - Number(timestamp);
  if (age > toleranceSeconds) return 'webhook-timestamp too old';
  if (age < -toleranceSeconds) return 'webhook-timestamp too new';
  const expected = Buffer.from(hmac(`${id}.${timestamp}.`, body).toString('base64'));
  // Several space-separated "v1,<base64>" entries (one per secret during a rotation): any may match.
  const entries = header(request, 'webhook-signature').split(' ').slice(0, 16);
  const matches = entries.some((entry) => entry.startsWith('v1,') && same(Buffer.from(entry.slice(3)), expected));
  return matches ? null : 'bad webhook-signature';
}

function reject(response, status, reason) {
  console.error(JSON.stringify({ rejected: reason, status }));
  response.writeHead(status, { 'content-type': 'text/plain' }).end(`${reason}\n`);
}

const server = https.createServer({ ...tls, requestTimeout: 10_000, headersTimeout: 5_000, maxHeaderSize: 16_384 }, (request, response) => {
  if (request.method !== 'POST') return reject(response, 405, 'POST only');
  const chunks = [];
  let size = 0;
  request.on('data', (chunk) => {
    size += chunk.length;
    if (size > maxBodyBytes) {
      reject(response, 413, 'body too large');
      request.destroy();
    } else chunks.push(chunk);
  });
  request.on('end', () => {
    if (size > maxBodyBytes) return;
    const body = Buffer.concat(chunks); // the raw bytes: verify these, not a re-serialised object
    const problem = problemOf(request, body);
    if (problem) return reject(response, 401, problem);

    let event;
    try {
      event = JSON.parse(body.toString('utf8'));
    } catch {
      return reject(response, 400, 'body is not JSON');
    }
    if (typeof event?.id !== 'string' || typeof event.event !== 'string') return reject(response, 400, 'not an event');
    response.writeHead(204).end(); // answer first (the service waits at most 10 s), then work
    if (seen.has(event.id)) return; // a retry or redelivery of an event already handled
    seen.add(event.id);
    if (seen.size > rememberedIds) seen.delete(seen.values().next().value);
    process.stdout.write(`${JSON.stringify({ id: event.id, event: event.event, createdAt: event.createdAt, data: event.data })}\n`);
  });
});

server.listen(port, host, () => {
  const address = server.address();
  console.error(`listening on ${address.address}:${address.port}`);
});
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => server.close(() => process.exit(0)));
