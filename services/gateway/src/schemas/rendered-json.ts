import type { FastifyReply } from 'fastify';

/**
 * Sends a response body the tasks service rendered as the API's JSON (its read RPCs answer in the
 * contract's shapes; see proto/tasks/v1/tasks.proto), as is: a Buffer skips the route's serializer,
 * so a 300-task list is neither decoded nor re-encoded here. The route's zod schema still documents
 * the shape in /openapi.json, and the e2e and schema-fuzzing suites hold the rendering to it.
 */
export function sendRenderedJson(reply: FastifyReply, json: Buffer, what: string): FastifyReply {
  if (json.length === 0) throw new Error(`tasks service answered without a ${what}`);
  return reply.type('application/json; charset=utf-8').send(json);
}
