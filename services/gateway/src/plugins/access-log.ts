import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { withHttpServerContext } from '@tws/common';
import type { GatewayConfig } from '../config.js';

/** Characters of a credential's id an access line carries: enough to find the key or user, never the key itself. */
const idPrefixLength = 8;

export interface AccessLogPolicy {
  /** Share of ordinary requests logged, 0..1 (ACCESS_LOG_SAMPLE_RATIO). */
  sampleRatio: number;
  /** A request slower than this is always logged (ACCESS_LOG_SLOW_MS). */
  slowMs: number;
}

/** Whether a finished request gets an access line: every 5xx and every slow one, and a sample of the rest. */
export function shouldLog(policy: AccessLogPolicy, statusCode: number, durationMs: number, draw: () => number = Math.random): boolean {
  if (statusCode >= 500 || durationMs >= policy.slowMs) return true;
  return policy.sampleRatio > 0 && (policy.sampleRatio >= 1 || draw() < policy.sampleRatio);
}

/** Who called, as an access line names them: the kind, the workspace and an id prefix; nothing secret. */
export function credentialOf(request: FastifyRequest): { credential: string; credentialId?: string; workspaceId?: string } {
  const principal = request.authenticatedPrincipal;
  const caller = principal ?? request.authenticatedCaller;
  if (!caller) return { credential: 'none' };
  const id = caller.kind === 'apiKey' ? caller.apiKeyId : caller.userId;
  return {
    credential: caller.kind,
    credentialId: id.slice(0, idPrefixLength),
    ...(principal ? { workspaceId: principal.workspaceId } : {}),
  };
}

/** One line per logged request: method, route template (never the raw URL), status, duration, credential. */
function accessLine(request: FastifyRequest, reply: FastifyReply): Record<string, unknown> {
  return {
    method: request.method,
    route: request.routeOptions.url ?? 'unmatched',
    statusCode: reply.statusCode,
    durationMs: Math.round(reply.elapsedTime * 10) / 10,
    ...credentialOf(request),
  };
}

/**
 * Access logs (docs/api.md "Request ids"): an `access` line at info for each sampled request, every 5xx and every
 * slow request; probes and scrapes (`config.rateLimit: false` routes) never. The request id is on
 * the line like on every line written while handling the request (the logger's mixin).
 */
async function accessLogPlugin(app: FastifyInstance, options: { config: GatewayConfig }): Promise<void> {
  const policy: AccessLogPolicy = { sampleRatio: options.config.ACCESS_LOG_SAMPLE_RATIO, slowMs: options.config.ACCESS_LOG_SLOW_MS };
  app.addHook('onResponse', (request, reply, done) => {
    // In the request's trace context (onResponse runs in the socket's): the line carries its trace id.
    if (request.routeOptions.config.rateLimit !== false && shouldLog(policy, reply.statusCode, reply.elapsedTime)) {
      withHttpServerContext(request, () => request.log.info(accessLine(request, reply), 'access'));
    }
    done();
  });
}

export default fp(accessLogPlugin, { name: 'access-log' });
