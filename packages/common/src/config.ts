import { z } from 'zod';

/** Raised when environment configuration is invalid; the message names every bad variable. */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

/**
 * Parses environment variables with a zod object schema, once, at start-up.
 * Fails fast with a message such as `DATABASE_URL: Invalid URL`.
 */
export function parseConfig<Shape extends z.ZodRawShape>(
  shape: Shape,
  env: NodeJS.ProcessEnv = process.env,
): z.infer<z.ZodObject<Shape>> {
  const result = z.object(shape).safeParse(env);
  if (result.success) return result.data;
  const problems = result.error.issues.map((issue) => {
    const variable = issue.path.join('.') || '(environment)';
    const detail = issue.code === 'invalid_type' && issue.input === undefined ? 'is required' : issue.message;
    return `${variable}: ${detail}`;
  });
  throw new ConfigError(`Invalid configuration: ${problems.join('; ')}`);
}

/** Reusable environment variable parsers. */
export const env = {
  host: (fallback = '0.0.0.0') => z.string().min(1).default(fallback),
  text: (fallback?: string) => (fallback === undefined ? z.string().min(1) : z.string().min(1).default(fallback)),
  count: (fallback: number) => z.coerce.number().int().positive().default(fallback),
  port: (fallback: number) => z.coerce.number().int().min(0).max(65535).default(fallback),
  logLevel: () => z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  url: () => z.url(),
  /** Comma-separated list, blanks dropped. */
  list: () =>
    z
      .string()
      .transform((value) => value.split(',').map((item) => item.trim()).filter((item) => item.length > 0)),
  bool: (fallback: boolean) => z.stringbool().default(fallback),
  durationMs: (fallback: number) => z.coerce.number().int().nonnegative().default(fallback),
  /** A gRPC target: `host:port`, `dns:///service:port`, or `ipv4:a:port,b:port`. */
  grpcTarget: (fallback: string) => z.string().regex(/^\S+$/, 'must be a gRPC target such as host:port').default(fallback),
};
