import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { requestIdHooks } from '@tws/common';

/**
 * Request ids (docs/api.md "Request ids"): the id fastify gave the request (`genReqId`, app.ts) comes back
 * as `X-Request-Id` on every response, is `reqId` on the request's log lines, and travels to the
 * backends as gRPC metadata (packages/common request-id.ts). Registered first, so even a 401 or a 429
 * from another plugin's hook carries it.
 */
async function requestIdPlugin(app: FastifyInstance): Promise<void> {
  app.addHook('onRequest', requestIdHooks.onRequest);
  app.addHook('preValidation', requestIdHooks.preValidation);
  app.addHook('onError', requestIdHooks.onError);
  app.addHook('onResponse', requestIdHooks.onResponse);
  app.addHook('onRequestAbort', requestIdHooks.onRequestAbort);
}

export default fp(requestIdPlugin, { name: 'request-id' });
