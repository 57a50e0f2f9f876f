import { pino, type Logger, type LevelWithSilent } from 'pino';

export type { Logger } from 'pino';

/** Structured JSON logs on stdout, one line per event, with the service name on every line. */
export function createLogger(service: string, level: LevelWithSilent = 'info'): Logger {
  return pino({
    level,
    base: { service },
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (label) => ({ level: label }) },
    redact: {
      paths: ['req.headers["x-api-key"]', 'req.headers.authorization', '*.secret', '*.password'],
      censor: '[redacted]',
    },
  });
}
