import { pino, type DestinationStream, type Logger, type LevelWithSilent } from 'pino';
import { currentRequestId, requestIdLogField } from './request-id.js';
import { activeTraceIds } from './trace-context.js';

export type { Logger } from 'pino';

/**
 * The request id of the call being served (request-id.ts), on every line logged while serving it,
 * unless the logger already binds one (fastify's per-request child logger binds `reqId` itself);
 * and, when tracing is on (tracing.ts), the `traceId` and `spanId` of the span active there.
 */
function requestMixin(_object: object, _level: number, logger: Logger): Record<string, string> {
  const fields: Record<string, string> = {};
  const requestId = currentRequestId();
  if (requestId !== undefined && !(requestIdLogField in logger.bindings())) fields[requestIdLogField] = requestId;
  const trace = activeTraceIds();
  if (trace !== undefined) {
    fields.traceId = trace.traceId;
    fields.spanId = trace.spanId;
  }
  return fields;
}

/**
 * Structured JSON logs on stdout (or `destination`, for tests), one line per event, with the service
 * name on every line.
 */
export function createLogger(service: string, level: LevelWithSilent = 'info', destination?: DestinationStream): Logger {
  const options: pino.LoggerOptions = {
    level,
    base: { service },
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (label) => ({ level: label }) },
    mixin: requestMixin,
    redact: {
      paths: ['req.headers["x-api-key"]', 'req.headers.authorization', '*.secret', '*.password'],
      censor: '[redacted]',
    },
  };
  return destination ? pino(options, destination) : pino(options);
}
