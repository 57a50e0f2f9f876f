import type { Readable } from 'node:stream';
import type { FastifyReply } from 'fastify';

/**
 * Sends a response body the tasks service rendered as the API's JSON (its read RPCs, and UpdateTask's
 * `task_json`, answer in the contract's shapes; see proto/tasks/v1/tasks.proto), as is: a Buffer
 * skips the route's serializer, so a 300-task list is neither decoded nor re-encoded here. The
 * route's zod schema still documents the shape in /openapi.json, and the e2e and schema-fuzzing
 * suites hold the rendering to it.
 * A stream (a task list read in pages) is piped with backpressure; if it fails midway, the response
 * is cut short (the status is already sent), never completed with a wrong body.
 */
export function sendRenderedJson(reply: FastifyReply, json: Buffer | Readable, what: string): FastifyReply {
  if (Buffer.isBuffer(json) && json.length === 0) throw new Error(`tasks service answered without a ${what}`);
  return reply.type('application/json; charset=utf-8').send(json);
}
