import { z } from 'zod';
import { env, parseConfig } from './config.js';

/**
 * The standard OpenTelemetry variables this project reads (tracing.ts). Tracing is on only when an
 * OTLP endpoint is set; the SDK reads the same variables itself, this schema only makes a wrong
 * value fail the start naming its variable instead of being ignored.
 */
/** An optional positive integer up to `max`; unset and blank both mean "not configured", as for every optional variable. */
function optionalPositiveInt(max: number) {
  return env.optionalText().pipe(z.coerce.number<string>().int().min(1).max(max).optional());
}

const samplers = ['always_on', 'always_off', 'traceidratio', 'parentbased_always_on', 'parentbased_always_off', 'parentbased_traceidratio'] as const;

export const tracingConfigShape = {
  OTEL_EXPORTER_OTLP_ENDPOINT: env.optionalText().pipe(z.url({ protocol: /^https?$/ }).optional()),
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: env.optionalText().pipe(z.url({ protocol: /^https?$/ }).optional()),
  OTEL_EXPORTER_OTLP_PROTOCOL: z.enum(['http/protobuf', 'http/json', 'grpc']).default('http/protobuf'),
  OTEL_SERVICE_NAME: z.string().regex(/^[A-Za-z0-9._-]{1,64}$/).optional(),
  OTEL_SDK_DISABLED: z.enum(['true', 'false']).default('false'),
  OTEL_TRACES_SAMPLER: z.enum(samplers).default('parentbased_traceidratio'),
  /** The ratio of new traces sampled (a request that arrives with a sampled `traceparent` stays sampled). */
  OTEL_TRACES_SAMPLER_ARG: z.coerce.number().min(0).max(1).default(0.1),
  /** The batch span processor's bounds (the SDK's defaults when unset): spans queued, ms between exports, ms an export may take, spans an export sends. */
  OTEL_BSP_MAX_QUEUE_SIZE: optionalPositiveInt(100_000),
  OTEL_BSP_SCHEDULE_DELAY: optionalPositiveInt(600_000),
  OTEL_BSP_EXPORT_TIMEOUT: optionalPositiveInt(600_000),
  OTEL_BSP_MAX_EXPORT_BATCH_SIZE: optionalPositiveInt(100_000),
};

export type TracingConfig = z.infer<z.ZodObject<typeof tracingConfigShape>>;

export function loadTracingConfig(environment: NodeJS.ProcessEnv = process.env): TracingConfig {
  return parseConfig(tracingConfigShape, environment);
}

/** On when an endpoint is set and the SDK is not disabled. */
export function tracingEnabled(config: TracingConfig): boolean {
  return config.OTEL_SDK_DISABLED === 'false' && (config.OTEL_EXPORTER_OTLP_ENDPOINT ?? config.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) !== undefined;
}

/** `services/<name>/dist/main.js` → `tws-<name>`, unless OTEL_SERVICE_NAME names the service. */
export function serviceNameOf(config: TracingConfig, entry: string | undefined): string {
  if (config.OTEL_SERVICE_NAME) return config.OTEL_SERVICE_NAME;
  const match = /services[/\\]([a-z-]+)[/\\]dist[/\\]main\.js$/.exec(entry ?? '');
  return match ? `tws-${match[1]}` : 'tws';
}
