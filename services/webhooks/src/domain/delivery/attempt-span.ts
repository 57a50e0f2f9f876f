import { inSpan, SpanKind, SpanStatusCode } from '@tws/common';
import type { AttemptResult } from '../../clients/sender.js';

/** The endpoint's host (no path, query or credentials: an endpoint URL may carry a token there). */
function hostOf(url: string): string {
  try {
    return new URL(url).hostname;
  } catch {
    return 'invalid';
  }
}

/**
 * One delivery attempt as its own CLIENT span (a child of the consumer's span of the message that
 * asked for it, handlers.ts): the endpoint's host, the attempt number, the delivery and endpoint
 * ids, the response status and the outcome. Never the secret, the URL's path or query, headers or
 * the body. A no-op when tracing is off or the trace is not sampled.
 */
export function tracedAttempt(
  target: { endpointUrl: string; endpointId: string; deliveryId: string; eventType: string },
  attempt: number,
  send: () => Promise<AttemptResult>,
): Promise<AttemptResult> {
  return inSpan('webhook delivery attempt', { kind: SpanKind.CLIENT }, async (span) => {
    // Only a sampled span is given its attributes: most attempts' spans are not, and the host takes a
    // URL parse (our samplers never read attributes).
    if (span.isRecording()) {
      span.setAttributes({
        'server.address': hostOf(target.endpointUrl),
        'http.request.method': 'POST',
        'tws.webhook.attempt': attempt,
        'tws.webhook.delivery_id': target.deliveryId,
        'tws.webhook.endpoint_id': target.endpointId,
        'tws.webhook.event_type': target.eventType,
      });
    }
    const result = await send();
    span.setAttribute('tws.webhook.outcome', result.outcome);
    if ('statusCode' in result && result.statusCode !== undefined) span.setAttribute('http.response.status_code', result.statusCode);
    if (result.outcome !== 'succeeded') span.setStatus({ code: SpanStatusCode.ERROR, message: result.outcome === 'blocked' ? 'blocked' : 'failed' });
    return result;
  });
}
