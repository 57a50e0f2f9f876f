// The ceiling: a bare fastify server in its own process (like the gateway), answering from memory.
//   GET  /single  → the exact bytes of a real GET /v1/tasks/:id response
//   GET  /list    → the exact bytes of a real GET /v1/projects/:id/tasks response (300 tasks)
//   POST /echo, PATCH /echo/:id → the JSON body it was sent (parsed and serialized again)
// Usage: node bench/api/ceiling-server.mjs <bodies.json>   (prints {"port":N} on stdout once listening)
import { readFileSync } from 'node:fs';
import Fastify from 'fastify';

const bodies = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const single = Buffer.from(bodies.single);
const list = Buffer.from(bodies.list);
const app = Fastify({ logger: false });
app.get('/single', (_request, reply) => reply.type('application/json; charset=utf-8').send(single));
app.get('/list', (_request, reply) => reply.type('application/json; charset=utf-8').send(list));
app.post('/echo', (request, reply) => reply.code(201).send(request.body));
app.patch('/echo/:id', (request) => request.body);
await app.listen({ host: '127.0.0.1', port: 0 });
process.stdout.write(`${JSON.stringify({ port: app.server.address().port })}\n`);
process.on('SIGTERM', () => void app.close().then(() => process.exit(0)));
